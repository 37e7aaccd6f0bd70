// A chat host page on the Vercel AI SDK, as its documentation builds one: `useChat` streams the
// reply from the test's /api/chat (the real `streamText` with a scripted model and the real
// @ai-sdk/mcp tools), and each MCP App tool part is rendered by `MCPAppRenderer` through the
// sandbox at `sandbox.url`. The page sets window.HOST_CONFIG = {tool, sandbox, allowedTools,
// cspInUrl}; with cspInUrl, the host reads the resource itself and passes its declared domains
// in the sandbox URL's ?csp=, so the proxy page is served with them at once. What the host saw
// is recorded on window.host.
import { useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat, MCPAppRenderer } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], errors: [], initialized: false });

async function post(path, body) {
  const answer = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return answer.json();
}

const handlers = {
  allowedTools: config.allowedTools,
  callTool: (params) => {
    host.calls.push(params);
    return post('/api/call-tool', params);
  },
  onInitialized: () => {
    host.initialized = true;
  },
  onError: (error) => host.errors.push(String(error)),
};

const loadResource = (app) => post('/api/resource', { uri: app.resourceUri });

/** The resource read before rendering, and the sandbox URL carrying its declared domains. */
function WithDomainsInUrl({ part }) {
  const [resource, setResource] = useState(null);
  useEffect(() => {
    loadResource(part.toolMetadata.app).then(setResource, (error) => host.errors.push(String(error)));
  }, [part.toolMetadata.app.resourceUri]);
  if (!resource) return null;
  const url = new URL(config.sandbox.url);
  if (resource.meta?.csp) url.searchParams.set('csp', JSON.stringify(resource.meta.csp));
  return <App part={part} resource={resource} sandbox={{ ...config.sandbox, url }} />;
}

function App({ part, resource, sandbox }) {
  return (
    <MCPAppRenderer
      part={part}
      sandbox={sandbox}
      resource={resource}
      loadResource={resource ? undefined : loadResource}
      handlers={handlers}
      hostInfo={{ name: 'ai sdk test host', version: '1.0.0' }}
    />
  );
}

function Chat() {
  const { messages, sendMessage } = useChat({ transport: new DefaultChatTransport({ api: '/api/chat' }) });
  const asked = useRef(false);
  useEffect(() => {
    if (asked.current) return;
    asked.current = true;
    sendMessage({ text: config.tool });
  }, []);
  const apps = messages.flatMap((message) => message.parts
    .filter((part) => part.type === 'dynamic-tool' && part.toolMetadata?.app && part.state === 'output-available')
    .map((part) => [`${message.id}-${part.toolCallId}`, part]));
  return apps.map(([key, part]) => (config.cspInUrl
    ? <WithDomainsInUrl key={key} part={part} />
    : <App key={key} part={part} sandbox={config.sandbox} />));
}

createRoot(document.getElementById('root')).render(<Chat />);
