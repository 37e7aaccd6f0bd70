// The embedded default (`cargo run --release`, no config): the demo host page on :8080 embeds
// the sample view through the proxy on :8081, and the whole handshake works in Chromium.
// DEMO_SCREENSHOT=docs/demo.png also saves the README's screenshot.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { startProxy, launchChromium, collectConsole } from './harness.mjs';

it('the development default serves a working demo on localhost:8080', { timeout: 60_000 }, async (t) => {
  const proxy = await startProxy(undefined);
  t.after(async () => assert.equal(await proxy.stop(), 0));
  assert.equal(proxy.listen, '127.0.0.1:8081');
  const demoLine = proxy.logs.find((l) => l.demo);
  assert.equal(demoLine?.demo, 'http://localhost:8080/', 'it prints the demo URL');
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 520 } });
  const console = collectConsole(page);
  try {
    await page.goto('http://localhost:8080/');
    const view = page.frameLocator('iframe').frameLocator('iframe');
    await view.locator('#status').filter({ hasText: 'connected to mcp-sandbox-proxy demo host' }).waitFor({ timeout: 15000 });
    assert.equal(await view.locator('#tool-input').textContent(), '{"sides":20}');
    await view.locator('#result-source').filter({ hasText: 'from ui/notifications/tool-result' }).waitFor();
    assert.match(await view.locator('#tool-result').textContent(), /^d20 → \d+$/);
    await view.getByRole('button', { name: 'Roll again (tools/call)' }).click();
    await view.locator('#result-source').filter({ hasText: 'from tools/call #2' }).waitFor({ timeout: 15000 });
    const log = await page.locator('#log li').evaluateAll((items) => items.map((li) => li.getAttribute('data-method')));
    for (const method of ['ui/notifications/sandbox-proxy-ready', 'ui/initialize', 'ui/notifications/initialized',
      'ui/notifications/tool-input', 'ui/notifications/tool-result', 'tools/call']) {
      assert.ok(log.includes(method), `${method} missing from ${log}`);
    }
    if (process.env.DEMO_SCREENSHOT) await page.screenshot({ path: process.env.DEMO_SCREENSHOT });
  } catch (error) {
    error.message += `\nconsole:\n${console.join('\n')}`;
    throw error;
  }
});
