#!/usr/bin/env node
// Lints the OpenAPI document (sdk/openapi.json, written by `npm run openapi`) with Redocly's
// recommended rules and Spectral's spectral:oas, both from node_modules and offline: no telemetry,
// no update check, no remote ruleset. Fails on any error (warnings are shown).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const DOCUMENT = 'sdk/openapi.json';
if (!existsSync(DOCUMENT)) {
  console.error(`${DOCUMENT} is missing: run \`npm run openapi\` first`);
  process.exit(1);
}

const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' };
const bin = (name) => path.join('node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);
const run = (name, args) => spawnSync(bin(name), args, { stdio: 'inherit', env, shell: process.platform === 'win32' }).status === 0;

const redocly = run('redocly', ['lint', '--config', 'redocly.yaml', '--format', 'stylish', DOCUMENT]);
const spectral = run('spectral', ['lint', '--ruleset', '.spectral.yaml', '--fail-severity', 'error', '--display-only-failures', DOCUMENT]);
process.exit(redocly && spectral ? 0 : 1);
