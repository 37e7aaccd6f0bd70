// Shared by the deployment tests: where things are.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The static release binary scripts/test builds (also what the browser tests run). */
export const STATIC_BINARY = process.env.MCP_SANDBOX_PROXY_BIN
  || join(ROOT, 'target', `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-gnu`, 'release', 'mcp-sandbox-proxy');
