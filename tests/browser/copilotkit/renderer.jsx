import { useEffect, useState } from 'react';
import { MCPAppsActivityType, MCPAppsActivityContentSchema } from '@copilotkit/react-core/v2';
import { mcpAppsRequestQueue } from '@copilotkit/mcp-apps-renderer';
import { AppRenderer } from '@mcp-ui/client';

// One URL object for every render: AppRenderer restarts its set-up when `sandbox.url` is another
// object, and a restart while the sandbox page loads leaves the view blank (mcp-ui#193).
const SANDBOX = new URL('https://chat.example-sandbox.net/sandbox.html');

// An MCP request through the agent, as CopilotKit's own renderer makes it (one at a time).
function proxied(agent, content, method, params) {
  return mcpAppsRequestQueue.enqueue(agent, () => agent.runAgent({
    forwardedProps: { __proxiedMCPRequest: { serverHash: content.serverHash, serverId: content.serverId, method, params } },
  })).then((run) => run.result);
}

function McpAppThroughSandbox({ content, agent }) {
  const [resource, setResource] = useState(null);
  useEffect(() => {
    if (!agent) return undefined;
    let live = true;
    proxied(agent, content, 'resources/read', { uri: content.resourceUri }).then((read) => {
      const [first] = read?.contents ?? [];
      if (live && first) setResource({ html: first.text, csp: first._meta?.ui?.csp });
    });
    return () => { live = false; };
  }, [agent, content.resourceUri, content.serverHash, content.serverId]);
  if (!agent || !resource) return null;
  return (
    <AppRenderer
      toolName={content.resourceUri}
      html={resource.html}
      sandbox={{ url: SANDBOX, csp: resource.csp }}
      toolInput={content.toolInput}
      toolResult={content.result}
      onCallTool={(params) => proxied(agent, content, 'tools/call', params)}
    />
  );
}

// Module scope: CopilotKit wants the same array on every render.
export const mcpAppRenderers = [
  { activityType: MCPAppsActivityType, content: MCPAppsActivityContentSchema, render: McpAppThroughSandbox },
];

// <CopilotKitProvider runtimeUrl="/api/copilotkit" renderActivityMessages={mcpAppRenderers}>
