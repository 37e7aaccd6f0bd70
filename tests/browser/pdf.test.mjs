// The real PDF example app (@modelcontextprotocol/server-pdf): its view runs pdf.js, which starts
// its worker from a blob: URL, and that worker imports a data: module. The view draws a page only
// on a host entry with view_opt_ins = ["worker-blob", "script-data"]; without them, the relay
// names both opt-ins. The real server answers the view's tool calls (in this process, over an
// in-memory transport), the real AppBridge hosts it, in each browser engine.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer as createPdfServer, allowedLocalFiles } from '@modelcontextprotocol/server-pdf';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { serviceFixture, startSdkHost, showOnSdkHost, ROOT, tempDir } from './harness.mjs';
import { selectedEngines, until, collectHooked } from './engines.mjs';

const PDF_VIEW = readFileSync(join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-pdf', 'dist', 'mcp-app.html'), 'utf8');
const TEXT = 'Sandboxed PDF';

/** A one-page PDF that shows TEXT, with a cross-reference table whose offsets are exact. */
function onePagePdf() {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    null,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const stream = `BT /F1 24 Tf 40 100 Td (${TEXT}) Tj ET`;
  objects[3] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  let text = '%PDF-1.4\n';
  const offsets = objects.map((body, i) => {
    const at = text.length;
    text += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  text += offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('');
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return text;
}

/** The real PDF server, and a client of it in this process. */
async function pdfServer() {
  const file = join(tempDir(), 'sandboxed.pdf');
  writeFileSync(file, onePagePdf());
  allowedLocalFiles.add(file);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await createPdfServer().connect(serverSide);
  const client = new Client({ name: 'pdf test host', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, file };
}

for (const engine of selectedEngines()) describe(`the PDF example view (${engine})`, () => {
  let pdf;
  const fx = serviceFixture(engine, {
    hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "pdf.sandbox.test:${port}"
view_opt_ins = ["worker-blob", "script-data"]
[[hosts]]
origin = "${hostOrigin}"
sandbox = "strict.sandbox.test:${port}"
`,
    host: ({ hostPort }) => startSdkHost(hostPort, { callTool: (params) => pdf.client.callTool(params) }),
  });

  before(async () => {
    pdf = await pdfServer();
  });

  after(async () => pdf?.client.close());

  /** The SDK host showing the PDF view through `sandbox`; the page, the relay's frame, and what the view shows. */
  async function show(t, sandbox) {
    const proxyUrl = `http://${sandbox}:${fx.port}/sandbox.html`;
    const toolInput = { url: pdf.file };
    const toolResult = await pdf.client.callTool({ name: 'display_pdf', arguments: toolInput });
    const resource = await pdf.client.readResource({ uri: 'ui://pdf-viewer/mcp-app.html' });
    const { csp } = resource.contents[0]._meta.ui;
    assert.equal(resource.contents[0].text, PDF_VIEW, 'the server serves the packaged view');
    const config = { proxyUrl, viewHtml: PDF_VIEW, csp, toolInput, toolResult, toolsUrl: '/tools' };
    const { page, proxyFrame } = await showOnSdkHost(fx, t, `${sandbox}-${t.name}`, config);
    const shown = async () => {
      for (const frame of await page.frames()) {
        const state = await frame.evaluate(() => {
          const canvas = document.querySelector('#pdf-canvas');
          if (!canvas) return null;
          const error = document.querySelector('#error');
          return {
            width: canvas.width,
            text: document.querySelector('#text-layer')?.textContent ?? '',
            error: error && getComputedStyle(error).display !== 'none' ? document.querySelector('#error-message')?.textContent ?? 'error' : null,
          };
        }).catch(() => null);
        if (state) return state;
      }
      return null;
    };
    return { page, proxyFrame, shown };
  }

  it('with view_opt_ins = ["worker-blob", "script-data"]: the page is drawn', { timeout: 90_000 }, async (t) => {
    const { page, shown } = await show(t, 'pdf.sandbox.test');
    const drawn = await until(async () => {
      const now = await shown();
      return now && (now.error || now.text.includes(TEXT)) ? now : null;
    }, 'the page drawn, or an error', 60_000);
    assert.equal(drawn.error, null);
    assert.ok(drawn.width > 0, JSON.stringify(drawn));
    const host = await page.evaluate(() => window.host);
    assert.deepEqual(host.violations.filter((v) => /^(blob|data)/.test(v.blockedURI)), []);
    assert.ok(host.calls.some((c) => c.name === 'read_pdf_bytes'), 'the view read the PDF through the host');
  });

  it('without them: the page is not drawn and the relay names both opt-ins', { timeout: 90_000 }, async (t) => {
    const { proxyFrame, shown } = await show(t, 'strict.sandbox.test');
    const logged = await until(async () => {
      const lines = await collectHooked(proxyFrame);
      return lines.some((l) => l.includes('script-data')) ? lines : null;
    }, 'the relay naming script-data', 60_000).catch(async (e) => {
      e.message += `; logged: ${(await collectHooked(proxyFrame)).join('\n')}`;
      throw e;
    });
    assert.ok(logged.some((l) => l.includes('worker-blob')), logged.join('\n'));
    const now = await shown();
    assert.ok(!now?.text.includes(TEXT), JSON.stringify(now));
  });
});
