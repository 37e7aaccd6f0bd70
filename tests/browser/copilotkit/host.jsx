// A CopilotKit chat page (CopilotKitProvider and CopilotChat of @copilotkit/react-core 1.74)
// whose MCP Apps render through the sandbox with the custom renderer of docs/hosts.md
// (renderer.jsx, the guide's block, with HOST_CONFIG.sandboxUrl for its sandbox), and an agent
// that needs no model: it shows one MCP App as an activity and answers the renderer's proxied
// MCP requests (resources/read, tools/call) as the app's server would.
// HOST_CONFIG: sandboxUrl, html, csp, toolResult, callResult; results on window.host.
import { createRoot } from 'react-dom/client';
import { Observable } from 'rxjs';
import { AbstractAgent, CopilotKitProvider, CopilotChat, EventType, MCPAppsActivityType } from '@copilotkit/react-core/v2';
import { mcpAppRenderers } from './renderer.jsx';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], reads: 0 });
const uri = 'ui://test/view.html';

function answer(request) {
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
window.showApp = () => agent.runAgent();

createRoot(document.getElementById('root')).render(
  <CopilotKitProvider agents__unsafe_dev_only={{ default: agent }} renderActivityMessages={mcpAppRenderers}>
    <div style={{ height: '900px' }}><CopilotChat /></div>
  </CopilotKitProvider>,
);
