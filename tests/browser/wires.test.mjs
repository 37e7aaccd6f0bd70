// Hosts with a message wire of their own (not JSON-RPC): they adopt one message,
// sandbox-resource-ready, to hand the HTML over, and keep their protocol. With the operator's
// per-host opt-in (relay_messages = "any") the relay forwards any message both ways unchanged,
// still only between the host's origin and the one view, and never a ui/notifications/sandbox-*
// one; without it, such messages are dropped. Two wires: {type: 'tool_call', requestId, …} /
// {type: 'tool_result', …}, and mcp-ui style types ('mcp-ui:ready', 'mcp-ui:height'), plus bare
// strings and structured-clone values (a Date, bytes). Each browser engine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture } from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

// The view's side of the wire: announce itself, ask for a tool, and echo whatever it is sent.
const WIRE_VIEW = `<!doctype html><body><script>
window.addEventListener('message', (e) => {
  if (e.source !== parent) return;
  parent.postMessage({ type: 'echo', got: e.data }, '*');
});
parent.postMessage({ type: 'mcp-ui:ready' }, '*');
parent.postMessage({ type: 'mcp-ui:height', height: 240 }, '*');
parent.postMessage('a bare string', '*');
// Reserved for the proxy, JSON-RPC or not: never relayed.
parent.postMessage({ method: 'ui/notifications/sandbox-proxy-ready', params: {} }, '*');
parent.postMessage('ui/notifications/sandbox-resource-ready', '*');
parent.postMessage([{ type: 'batched' }, { jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready' }], '*');
parent.postMessage(new String('ui/notifications/sandbox-proxy-ready'), '*');
// The same, wrapped as a host of another wire might unwrap it: never relayed either.
const reserved = JSON.stringify({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready' });
const backslash = String.fromCharCode(92);
parent.postMessage(reserved.replace('ui/', 'ui' + backslash + '/'), '*');
parent.postMessage(reserved.replace('ui/', backslash + 'u0075i/'), '*');
parent.postMessage(JSON.stringify(reserved), '*');
parent.postMessage([[{ method: 'ui/notifications/sandbox-proxy-ready' }]], '*');
parent.postMessage({ type: 'wrapped', inner: { method: 'ui/notifications/sandbox-proxy-ready' } }, '*');
parent.postMessage({ type: 'wrapped', inner: reserved }, '*');
parent.postMessage(new TextEncoder().encode(reserved), '*');
parent.postMessage(new TextEncoder().encode(reserved).buffer, '*');
parent.postMessage(new Blob([reserved]), '*');
parent.postMessage(new Map([['m', reserved]]), '*');
parent.postMessage({ type: 'tool_call', requestId: 'r1', name: 'get_weather', arguments: { city: 'Oslo' } }, '*');
</script></body>`;

for (const engine of selectedEngines()) {
  describe(`hosts with their own message wire (${engine})`, () => {
    const fx = serviceFixture(engine, {
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "any.sandbox.test:${port}"
relay_messages = "any"
[[hosts]]
origin = "${hostOrigin}"
sandbox = "spec.sandbox.test:${port}"
`,
    });

    /** The raw host with the proxy at `sandbox` and WIRE_VIEW mounted in it. */
    async function mounted(t, sandbox) {
      const page = await fx.browser.newPage();
      t.after(async () => {
        if (t.passed === false) t.diagnostic(page.console.join('\n'));
        await page.close();
      });
      await page.goto(`${fx.hostOrigin}/raw`);
      await page.evaluate((o) => window.mountProxy(o), { proxyUrl: `http://${sandbox}:${fx.port}/sandbox.html` });
      // Sent before the view exists: held until it speaks, as JSON-RPC would be.
      await page.evaluate(() => window.toProxy({ type: 'early', n: 1 }));
      await page.evaluate((h) => window.sendResource({ html: h }), WIRE_VIEW);
      return page;
    }

    it('with relay_messages = "any": every message passes unchanged both ways, the reserved ones never', { timeout: 60_000 }, async (t) => {
      const page = await mounted(t, 'any.sandbox.test');
      await until(() => page.evaluate(() => window.received.some((m) => m.data?.type === 'tool_call')), 'the tool_call');
      await page.evaluate(() => {
        window.toProxy({ type: 'tool_result', requestId: 'r1', result: { content: [{ type: 'text', text: '3 °C' }] } });
        window.toProxy({ type: 'clone', when: new Date(0), bytes: new Uint8Array([1, 2, 3]) });
        window.toProxy('a string from the host');
        window.toProxy({ method: 'ui/notifications/sandbox-resource-ready', params: { html: 'not a mount' } });
        window.toProxy({ type: 'last' });
      });
      await until(() => page.evaluate(() => window.received.some((m) => m.data?.got?.type === 'last')), 'the echo of the last message');
      const seen = await page.evaluate(() => {
        const fromView = window.received.map((m) => m.data);
        const echoed = fromView.filter((d) => d && d.type === 'echo').map((d) => d.got);
        const clone = echoed.find((g) => g && g.type === 'clone');
        return {
          origins: [...new Set(window.received.map((m) => m.origin))],
          fromView: fromView.filter((d) => !(d && d.type === 'echo')),
          echoed: echoed.filter((g) => !(g && g.type === 'clone')),
          cloneKept: clone !== undefined && clone.when instanceof Date && clone.when.getTime() === 0
            && clone.bytes instanceof Uint8Array && clone.bytes.join() === '1,2,3',
        };
      });
      assert.deepEqual(seen.origins, [`http://any.sandbox.test:${fx.port}`]);
      assert.deepEqual(seen.fromView, [
        { jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} },
        { type: 'mcp-ui:ready' },
        { type: 'mcp-ui:height', height: 240 },
        'a bare string',
        { type: 'tool_call', requestId: 'r1', name: 'get_weather', arguments: { city: 'Oslo' } },
      ], 'the proxy\'s own ready first, then the view\'s wire; the reserved ones are gone');
      assert.deepEqual(seen.echoed, [
        { type: 'early', n: 1 },
        { type: 'tool_result', requestId: 'r1', result: { content: [{ type: 'text', text: '3 °C' }] } },
        'a string from the host',
        { type: 'last' },
      ], 'the view got the host\'s wire, the held message first; not the reserved one');
      assert.ok(seen.cloneKept, 'a Date and bytes arrive as a Date and bytes');
    });

    it('without the opt-in: the wire is dropped both ways, JSON-RPC only', { timeout: 60_000 }, async (t) => {
      const page = await mounted(t, 'spec.sandbox.test');
      await page.evaluate(() => window.toProxy({ type: 'tool_result', requestId: 'r1' }));
      // The view has run (its document is complete, its messages posted) before anything is judged.
      const proxyFrame = (await page.frames()).find((f) => f.url.startsWith(`http://spec.sandbox.test:${fx.port}`));
      await until(() => proxyFrame.evaluate(() => document.querySelector('iframe')?.contentDocument?.readyState === 'complete'),
        'the view is mounted and loaded');
      await new Promise((r) => setTimeout(r, 300));
      const received = await page.evaluate(() => window.received.map((m) => m.data));
      assert.deepEqual(received, [{ jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} }]);
    });
  });
}
