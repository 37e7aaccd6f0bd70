// A host page built on @mcp-ui/client's AppRenderer (React), as chat hosts use it: the MCP
// connection lives elsewhere, so the view's HTML comes in `html` and its tool calls go to
// `onCallTool`. `window.showView(i)` re-renders with another resource's HTML, as a host does when
// a resource changes. The test page sets window.HOST_CONFIG; results are recorded on window.host.
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { AppRenderer } from '@mcp-ui/client';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], errors: [] });

function timeResult(time) {
  return { content: [{ type: 'text', text: time }], structuredContent: { time } };
}

function Host() {
  const [shown, setShown] = useState(0);
  window.showView = setShown;
  return (
    <AppRenderer
      toolName="get-time"
      sandbox={{ url: new URL(config.proxyUrl) }}
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
