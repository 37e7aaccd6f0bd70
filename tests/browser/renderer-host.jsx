// A host page built on @mcp-ui/client's AppRenderer (React), as chat hosts use it: the MCP
// connection lives elsewhere, so the view's HTML comes in `html` and its tool calls go to
// `onCallTool`. `window.showView(i)` re-renders with another resource's HTML, as a host does when
// a resource changes. The test page sets window.HOST_CONFIG; results are recorded on window.host.
//
// HOST_CONFIG.rerenderWhileLoading: the page re-renders the renderer at once when the sandbox
// page's iframe is inserted, before that page can have said it is ready (a chat streaming its
// next message does the same, by chance). HOST_CONFIG.urlPerRender: `sandbox.url` is a new
// object on every render, as an inline `new URL(...)` makes it; otherwise it is made once, as
// docs/hosts.md says to. HOST_CONFIG.csp: the resource's declared domains, which AppRenderer
// puts in the sandbox URL as ?csp=.
import { useState } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { AppRenderer } from '@mcp-ui/client';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], errors: [], rerendersWhileLoading: 0, methods: [] });
const sandboxUrl = new URL(config.proxyUrl);
// The methods of what reached the page, in order: whether the view ever spoke.
window.addEventListener('message', (event) => host.methods.push(event.data?.method ?? null));

function timeResult(time) {
  return { content: [{ type: 'text', text: time }], structuredContent: { time } };
}

let rerender = () => {};
if (config.rerenderWhileLoading) {
  // A mutation record is delivered in the microtask after the insertion, and flushSync runs the
  // render and its effects before returning: nothing the sandbox page sends can come between.
  new MutationObserver((changes) => {
    const inserted = changes.some((change) => [...change.addedNodes]
      .some((node) => node.nodeName === 'IFRAME' && node.src.startsWith(config.proxyUrl)));
    if (!inserted) return;
    host.rerendersWhileLoading += 1;
    flushSync(rerender);
  }).observe(document, { childList: true, subtree: true });
}

function Host() {
  const [shown, setShown] = useState(0);
  const [, setRenders] = useState(0);
  window.showView = setShown;
  rerender = () => setRenders((n) => n + 1);
  return (
    <AppRenderer
      toolName="get-time"
      sandbox={{ url: config.urlPerRender ? new URL(config.proxyUrl) : sandboxUrl, csp: config.csp }}
      html={config.views[shown]}
      toolInput={{}}
      toolResult={timeResult(config.firstTime)}
      onCallTool={async (params) => {
        host.calls.push(params);
        return timeResult(config.secondTime);
      }}
      onError={(error) => host.errors.push(String(error))}
    />
  );
}

createRoot(document.getElementById('root')).render(<Host />);
