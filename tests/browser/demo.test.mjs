// The embedded default (`cargo run --release`, no config): the demo host page on :8080 embeds
// the sample view through the proxy on :8081, and the whole handshake works in each engine.
// DEMO_SCREENSHOT=docs/demo.png also saves the README's screenshot (Chromium).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { startProxy } from './harness.mjs';
import { launch, selectedEngines, until } from './engines.mjs';

for (const engine of selectedEngines()) {
  it(`the development default serves a working demo on localhost:8080 (${engine})`, { timeout: 60_000 }, async (t) => {
    const proxy = await startProxy(undefined);
    t.after(async () => assert.equal(await proxy.stop(), 0));
    assert.equal(proxy.listen, '127.0.0.1:8081');
    // Logged just after the `listening` line that startProxy waits for.
    const demoLine = await until(() => proxy.logs.find((l) => l.demo), 'the service prints the demo URL', 5_000);
    assert.equal(demoLine.demo, 'http://localhost:8080/', 'it prints the demo URL');
    const browser = await launch(engine);
    t.after(() => browser.close());
    const page = await browser.newPage();
    t.after(() => page.close());
    try {
      await page.goto('http://localhost:8080/');
      const text = (selector) => document.querySelector(selector)?.textContent ?? null;
      // The view's frame: the one whose #status says it is connected.
      const viewFrame = async () => {
        for (const frame of await page.frames()) {
          const status = await frame.evaluate(text, '#status').catch(() => null);
          if (status?.includes('connected to mcp-sandbox-proxy demo host')) return frame;
        }
        return null;
      };
      const view = await until(viewFrame, 'the view says it is connected');
      // The view says it is connected once initialized; the tool input arrives just after.
      await until(async () => (await view.evaluate(text, '#tool-input')) === '{"sides":20}', 'the tool input arrives');
      await until(async () => (await view.evaluate(text, '#result-source'))?.includes('from ui/notifications/tool-result'),
        'the tool result arrives');
      assert.match(await view.evaluate(text, '#tool-result'), /^d20 → \d+$/);
      await view.evaluate(() => [...document.querySelectorAll('button')]
        .find((b) => b.textContent.trim() === 'Roll again (tools/call)').click());
      await until(async () => (await view.evaluate(text, '#result-source'))?.includes('from tools/call #2'),
        'the second roll arrives through tools/call');
      const log = await page.evaluate(() => [...document.querySelectorAll('#log li')].map((li) => li.getAttribute('data-method')));
      for (const method of ['ui/notifications/sandbox-proxy-ready', 'ui/initialize', 'ui/notifications/initialized',
        'ui/notifications/tool-input', 'ui/notifications/tool-result', 'tools/call']) {
        assert.ok(log.includes(method), `${method} missing from ${log}`);
      }
      if (process.env.DEMO_SCREENSHOT && page.screenshot) await page.screenshot(process.env.DEMO_SCREENSHOT);
    } catch (error) {
      error.message += `\nconsole:\n${page.console.join('\n')}`;
      throw error;
    }
  });
}
