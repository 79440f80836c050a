import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { startMcpProxy } from './mcp.js';

/** `pam-mcp`: MCP on stdio for desktop assistants, calling the service at PAM_API_URL with PAM_API_KEY. */
const apiUrl = process.env.PAM_API_URL ?? '';
const apiKey = process.env.PAM_API_KEY ?? '';
if (!URL.canParse(apiUrl) || !/^https?:/i.test(apiUrl) || apiKey === '') {
  process.stderr.write('pam-mcp: set PAM_API_URL (the service, e.g. https://api.example.com) and PAM_API_KEY (a tenant API key)\n');
  process.exit(2);
}
try {
  const proxy = await startMcpProxy({ apiUrl, apiKey }, new StdioServerTransport());
  // stdout is the protocol's: anything said to a person goes to stderr.
  process.stderr.write(`pam-mcp: serving ${new URL('/mcp', apiUrl).href} on stdio\n`);
  process.stdin.on('end', () => void proxy.close().then(() => process.exit(0)));
} catch (err) {
  const refused = /401|unauthori[sz]ed/i.test(err instanceof Error ? err.message : String(err));
  process.stderr.write(
    refused
      ? `pam-mcp: the service refused PAM_API_KEY (401): check the key\n`
      : `pam-mcp: could not reach ${apiUrl}: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
}
