// A host page of the shape of A2UI's MCP Apps component as it ships now (A2UI's samples/client/lit/
// custom-components-example/ui/custom-components/mcp-apps-component.ts), without Lit: its iframe
// (no sandbox attribute, referrer policy `origin`), how it reads VITE_MCP_SANDBOX_URL (through a
// `const meta = import.meta`), its ready check (the frame's window and exactly that URL's origin),
// the real AppBridge it connects, and the message it sends (opaque views: no allow-same-origin,
// no csp), or with docs/hosts.md's "a2ui csp" recipe. a2ui.test.mjs builds it with Vite, as the
// sample is built, with the guide's "a2ui build" line or without, and the csp recipe where its
// marker is.
// HOST_CONFIG: htmlContent, resourceCsp (what the guide's `resourceCsp` property holds), recipe
// (true: the guide's call), firstTime, secondTime; results on window.host.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

// The sample's own proxy page, on the app's port (its shared-constants.js).
const SANDBOX_IFRAME_PATH = '/sample-sandbox/sandbox.html';
const config = window.HOST_CONFIG;
const host = (window.host = { calls: [], readyOrigins: [], framed: null, initialized: false });
const READY = 'ui/notifications/sandbox-proxy-ready';

class McpAppsComponent {
  constructor(htmlContent, resourceCsp) {
    this.htmlContent = htmlContent;
    this.resourceCsp = resourceCsp;
  }

  async initializeSandbox() {
    this.iframe = document.createElement('iframe');
    this.iframe.id = 'mcp-sandbox';
    this.iframe.setAttribute('referrerpolicy', 'origin');
    this.iframe.style.cssText = 'width: 100%; height: 420px; border: 0';
    document.body.appendChild(this.iframe);

    // As the component ships; a2ui.test.mjs puts the guide's "a2ui build" line in their place.
    // <a2ui build>
    const meta = import.meta;
    const configuredSandboxUrl = meta && meta.env ? meta.env.VITE_MCP_SANDBOX_URL : undefined;
    // </a2ui build>
    const sandboxOrigin = configuredSandboxUrl || `http://127.0.0.1:${window.location.port}${SANDBOX_IFRAME_PATH}`;
    const sandboxUrl = new URL(sandboxOrigin);
    host.framed = sandboxUrl.href;

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
      sandbox: 'allow-scripts allow-forms allow-popups allow-modals',
    });
  }

  async sendWithRecipe() {
    /* recipe: a2ui csp */
  }
}

function timeResult(time) {
  return { content: [{ type: 'text', text: time }], structuredContent: { time } };
}

await new McpAppsComponent(config.htmlContent, config.resourceCsp).initializeSandbox();
