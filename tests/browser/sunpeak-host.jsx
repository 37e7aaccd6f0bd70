// A page that embeds sunpeak's <Inspector> (sunpeak/inspector, as its docs embed it) with one
// app: one resource (HOST_CONFIG.html, its _meta from HOST_CONFIG.meta) and one UI tool that
// shows it with HOST_CONFIG.toolResult; the views' tools/call are answered with
// HOST_CONFIG.callResult and recorded on window.host. `sandboxUrl` is the service's page.
import { createRoot } from 'react-dom/client';
import { Inspector } from 'sunpeak/inspector';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [] });
const uri = 'ui://test/view.html';
const app = {
  name: 'test app',
  resources: [{ uri, html: config.html, _meta: config.meta }],
  tools: [{
    tool: { name: config.tool, inputSchema: { type: 'object' }, _meta: { ui: { resourceUri: uri }, openai: { outputTemplate: uri } } },
    simulations: [{ name: 'default', toolInput: {}, toolResult: config.toolResult }],
  }],
};

async function onCallTool(params) {
  host.calls.push(params);
  return config.callResult;
}

createRoot(document.getElementById('root')).render(
  <div style={{ height: '900px' }}>
    <Inspector app={app} sandboxUrl={config.sandboxUrl} onCallTool={onCallTool} />
  </div>,
);
