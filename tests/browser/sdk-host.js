// A host page built on the real MCP Apps SDK: AppBridge + PostMessageTransport from
// @modelcontextprotocol/ext-apps, talking to a view through mcp-sandbox-proxy. The test page
// sets window.HOST_CONFIG; results are recorded on window.host for the test to read.
// HOST_CONFIG: proxyUrl, viewHtml, csp, firstTime, secondTime; optional allow (the outer
// iframe's), cspInQuery (false: the csp goes only in sandbox-resource-ready, as the spec's flow
// allows), sandbox (the resource's override of the view's sandbox attribute), holdResource
// (true: the resource is sent only when the test calls window.sendResource()), toolInput and
// toolResult (what the view is shown first, instead of firstTime), toolsUrl (the view's tool
// calls go there, answered by a real MCP server the test runs, instead of secondTime).
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], events: [], initialized: false, errors: [] });

const frame = document.createElement('iframe');
frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
frame.style.cssText = 'width: 100%; height: 420px; border: 0';
if (config.allow) frame.setAttribute('allow', config.allow);

// Every ready notification, for the whole life of the page: a proxy page says it once. And the
// proxy's reports of what the view's policy refused.
host.proxyReadyCount = 0;
host.violations = [];
window.addEventListener('message', (event) => {
  if (event.source !== frame.contentWindow) return;
  if (event.data?.method === 'ui/notifications/sandbox-proxy-ready') host.proxyReadyCount += 1;
  if (event.data?.method === 'ui/notifications/sandbox-csp-violation') host.violations.push(event.data.params);
});

// Register before setting src, so the proxy's ready notification cannot be missed.
const proxyReady = new Promise((resolve) => {
  window.addEventListener('message', function onReady(event) {
    if (event.source === frame.contentWindow && event.data?.method === 'ui/notifications/sandbox-proxy-ready') {
      window.removeEventListener('message', onReady);
      host.events.push({ proxyReadyOrigin: event.origin });
      resolve();
    }
  });
});
const url = new URL(config.proxyUrl);
if (config.csp && config.cspInQuery !== false) url.searchParams.set('csp', JSON.stringify(config.csp));
frame.src = url.href;
document.body.appendChild(frame);

await proxyReady;
const bridge = new AppBridge(
  null,
  { name: 'sdk test host', version: '1.0.0' },
  { serverTools: {}, openLinks: {} },
  { hostContext: { theme: 'light', platform: 'web', displayMode: 'inline' } },
);
bridge.oninitialized = () => {
  host.initialized = true;
  bridge.sendToolInput({ arguments: config.toolInput ?? {} });
  bridge.sendToolResult(config.toolResult ?? timeResult(config.firstTime));
};
bridge.oncalltool = async (params) => {
  host.calls.push(params);
  if (!config.toolsUrl) return timeResult(config.secondTime);
  const answer = await fetch(config.toolsUrl, { method: 'POST', body: JSON.stringify(params) });
  return answer.json();
};
bridge.onsizechange = ({ height }) => {
  if (height) frame.style.height = `${height}px`;
};
await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
if (config.holdResource) await new Promise((resolve) => { window.sendResource = resolve; });
await bridge.sendSandboxResourceReady({ html: config.viewHtml, csp: config.csp, sandbox: config.sandbox });

function timeResult(time) {
  return { content: [{ type: 'text', text: time }], structuredContent: { time } };
}
