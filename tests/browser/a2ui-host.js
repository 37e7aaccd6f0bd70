// A host page of the shape of A2UI's MCP Apps component (A2UI's samples/client/lit,
// mcp-apps-in-a2ui-sample/ui/custom-components/mcp-apps-component.ts), without Lit: its iframe
// (the same sandbox and referrer policy), its ready check (the frame's window and exactly the
// configured URL's origin), the real AppBridge it connects, and the message it sends: as the
// component ships (no csp), or with docs/hosts.md's "a2ui csp" recipe, which a2ui.test.mjs
// puts where the marker below is before bundling.
// HOST_CONFIG: sandboxUrl (VITE_MCP_SANDBOX_URL), htmlContent, resourceCsp, recipe (true: the
// guide's call), firstTime, secondTime; results on window.host.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], readyOrigins: [], initialized: false });
const READY = 'ui/notifications/sandbox-proxy-ready';

class McpAppsComponent {
  constructor(htmlContent, resourceCsp) {
    this.htmlContent = htmlContent;
    this.resourceCsp = resourceCsp;
  }

  async mount() {
    this.iframe = document.createElement('iframe');
    this.iframe.id = 'mcp-sandbox';
    this.iframe.setAttribute('referrerpolicy', 'origin');
    this.iframe.setAttribute('sandbox', 'allow-scripts allow-forms allow-popups allow-modals allow-same-origin');
    this.iframe.style.cssText = 'width: 100%; height: 420px; border: 0';
    document.body.appendChild(this.iframe);
    const sandboxUrl = new URL(config.sandboxUrl);
    this.bridge = new AppBridge(
      null,
      { name: 'A2UI Client Host', version: '1.0.0' },
      { serverTools: {}, updateModelContext: { text: {} } },
      { hostContext: { theme: 'light', platform: 'web', displayMode: 'inline' } },
    );
    this.bridge.oninitialized = () => {
      host.initialized = true;
      this.bridge.sendToolInput({ arguments: {} });
      this.bridge.sendToolResult(timeResult(config.firstTime));
    };
    this.bridge.oncalltool = async (params) => {
      host.calls.push(params);
      return timeResult(config.secondTime);
    };
    const proxyReady = new Promise((resolve) => {
      const listener = ({ source, data, origin }) => {
        if (source === this.iframe.contentWindow && origin === sandboxUrl.origin && data?.method === READY) {
          window.removeEventListener('message', listener);
          host.readyOrigins.push(origin);
          resolve();
        }
      };
      window.addEventListener('message', listener);
    });
    this.iframe.src = sandboxUrl.href;
    await proxyReady;
    await this.bridge.connect(new PostMessageTransport(this.iframe.contentWindow, this.iframe.contentWindow));
    if (config.recipe) await this.sendWithRecipe();
    else await this.sendAsShipped();
  }

  async sendAsShipped() {
    await this.bridge.sendSandboxResourceReady({
      html: this.htmlContent,
      sandbox: 'allow-scripts allow-forms allow-popups allow-modals allow-same-origin',
    });
  }

  async sendWithRecipe() {
    /* recipe: a2ui csp */
  }
}

function timeResult(time) {
  return { content: [{ type: 'text', text: time }], structuredContent: { time } };
}

await new McpAppsComponent(config.htmlContent, config.resourceCsp).mount();
