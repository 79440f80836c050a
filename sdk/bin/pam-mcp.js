#!/usr/bin/env node
// The `pam-mcp` bin: the built entry (dist/mcp-bin.js), or in a clone without a build its
// TypeScript source through tsx, so `npx pam-mcp` works either way.
import { existsSync } from 'node:fs';

const built = new URL('../dist/mcp-bin.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/mcp-bin.ts', import.meta.url).href);
}
