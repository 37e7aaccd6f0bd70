// A CopilotKit chat page (CopilotKitProvider and CopilotChat of @copilotkit/react-core 1.74)
// whose MCP Apps render through the sandbox with the custom renderer of docs/hosts.md
// (renderer.jsx, the guide's block, with HOST_CONFIG.sandboxUrl for its sandbox), and an agent
// that needs no model: it shows one MCP App as an activity and answers the renderer's proxied
// MCP requests (resources/read, tools/call) as the app's server would.
// HOST_CONFIG: sandboxUrl, html, csp, toolResult, callResult; results on window.host.
import { useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { Observable } from 'rxjs';
import { AbstractAgent, CopilotKitProvider, CopilotChat, EventType, MCPAppsActivityType } from '@copilotkit/react-core/v2';
import { mcpAppRenderers } from './renderer.jsx';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], reads: 0, seen: [] });
const uri = 'ui://test/view.html';
const started = performance.now();

// What reached this page and when: a failed test's diagnostics show how far a view got.
function saw(what) {
  host.seen.push(`${Math.round(performance.now() - started)} ms ${what}`);
}
const iframesIn = (node) => (node.nodeName === 'IFRAME' ? [node] : [...(node.querySelectorAll?.('iframe') ?? [])]);
new MutationObserver((changes) => {
  for (const change of changes) {
    for (const node of change.addedNodes) iframesIn(node).forEach((f) => saw(`iframe added: ${f.src.slice(0, 80)}`));
    for (const node of change.removedNodes) iframesIn(node).forEach((f) => saw(`iframe removed: ${f.src.slice(0, 80)}`));
  }
}).observe(document, { childList: true, subtree: true });
window.addEventListener('message', (event) => {
  const data = event.data;
  saw(`message from ${event.origin}: ${data?.method ?? (data?.id !== undefined ? `response ${data.id}` : typeof data)}`);
});

function answer(request) {
  saw(`agent answers ${request.method}`);
  if (request.method === 'resources/read') {
    host.reads += 1;
    return { contents: [{ uri, mimeType: 'text/html;profile=mcp-app', text: config.html, _meta: { ui: { csp: config.csp } } }] };
  }
  if (request.method === 'tools/call') {
    host.calls.push(request.params);
    return config.callResult;
  }
  return {};
}

class ScriptedAgent extends AbstractAgent {
  run(input) {
    return new Observable((subscriber) => {
      const { threadId, runId } = input;
      subscriber.next({ type: EventType.RUN_STARTED, threadId, runId });
      const request = input.forwardedProps?.__proxiedMCPRequest;
      if (request) {
        subscriber.next({ type: EventType.RUN_FINISHED, threadId, runId, result: answer(request) });
      } else {
        subscriber.next({
          type: EventType.ACTIVITY_SNAPSHOT, messageId: 'mcp-app-1', activityType: MCPAppsActivityType, replace: true,
          content: { resourceUri: uri, serverHash: 'test-server', toolInput: {}, result: config.toolResult },
        });
        subscriber.next({ type: EventType.RUN_FINISHED, threadId, runId });
      }
      subscriber.complete();
    });
  }
}

const agent = new ScriptedAgent();

// window.showApp exists only once the chat has taken the agent: CopilotChat's first effect
// clears the messages of an agent it adopts, so an app shown before it ran was wiped (seen under
// load in WebKit, where the chat's input was on the page before that effect had run). React runs
// a commit's effects in tree order, so this one, after the chat's, runs after it.
function ShowAppOnceTheChatHasTheAgent() {
  useEffect(() => {
    window.showApp = () => { saw('showApp'); return agent.runAgent(); };
  }, []);
  return null;
}

createRoot(document.getElementById('root')).render(
  <CopilotKitProvider agents__unsafe_dev_only={{ default: agent }} renderActivityMessages={mcpAppRenderers}>
    <div style={{ height: '900px' }}><CopilotChat /></div>
    <ShowAppOnceTheChatHasTheAgent />
  </CopilotKitProvider>,
);
