// Generated tenants for the benchmarks that scale with the number of hosts: tenant-i.chat.example
// framing tenant-i.sandbox.example, with per-server subdomains, as a platform runs one entry per
// tenant.

/** `count` `[[hosts]]` entries, from `first` on, as TOML text. */
export function tenantEntries(count, first = 0) {
  const lines = [];
  for (let i = first; i < first + count; i++) {
    lines.push('[[hosts]]', `origin = "https://tenant-${i}.chat.example"`,
      `sandbox = "tenant-${i}.sandbox.example"`, 'per_server_subdomains = true');
  }
  return `${lines.join('\n')}\n`;
}

/** A whole config with `count` tenants, listening on 127.0.0.1:`port`. */
export function tenantConfig(count, port, extra = '') {
  return `listen = "127.0.0.1:${port}"\n${extra}[limits]\nmax_connections = 64\n${tenantEntries(count)}`;
}
