// A host page built on the real MCP Apps SDK: AppBridge + PostMessageTransport from
// @modelcontextprotocol/ext-apps, talking to a view through mcp-sandbox-proxy. The test page
// sets window.HOST_CONFIG; results are recorded on window.host for the test to read.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], events: [], initialized: false, errors: [] });

const frame = document.createElement('iframe');
frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
frame.style.cssText = 'width: 100%; height: 420px; border: 0';
if (config.allow) frame.setAttribute('allow', config.allow);

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
if (config.csp) url.searchParams.set('csp', JSON.stringify(config.csp));
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
  bridge.sendToolInput({ arguments: {} });
  bridge.sendToolResult(timeResult(config.firstTime));
};
bridge.oncalltool = async (params) => {
  host.calls.push(params);
  return timeResult(config.secondTime);
};
bridge.onsizechange = ({ height }) => {
  if (height) frame.style.height = `${height}px`;
};
await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
await bridge.sendSandboxResourceReady({ html: config.viewHtml, csp: config.csp });

function timeResult(time) {
  return { content: [{ type: 'text', text: time }], structuredContent: { time } };
}
