import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './server-process.js';

// Debian's Caddy in front of the service, for the TLS tests: the same rule as the browser tests.
export const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy';
export const available = existsSync(CADDY);
/** Under CI Caddy is installed by .ci/run: its absence is a failure, not a skip. */
export const skip = !available && process.env.CI !== 'true' ? `no caddy at ${CADDY} (apt-get install caddy)` : false;

export interface Caddy {
  /** Where its HTTPS listener is, on 127.0.0.1. */
  httpsPort: number;
  /** Its internal CA's root certificate (PEM), to trust instead of turning verification off. */
  rootCa: string;
  /** Its data folder: the certificates it got are under `caddy/certificates/local/<name>/`. */
  dataDir: string;
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Runs `caddy run` on a Caddyfile, with test-only global options put first in its global block:
 * the admin endpoint off, the internal CA as the only issuer (nothing leaves the machine, and its
 * root is never installed in the system's trust), free ports on 127.0.0.1, and a data folder of its
 * own. Resolves once the HTTPS port accepts connections.
 */
export async function startCaddy(caddyfile: string, timeoutMs = 20_000): Promise<Caddy> {
  if (!available) throw new Error(`no caddy at ${CADDY}: apt-get install caddy (.ci/run does under CI)`);
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pam-caddy-'));
  const testOptions = [
    'admin off',
    'local_certs',
    'skip_install_trust',
    'default_bind 127.0.0.1',
    `http_port ${httpPort}`,
    `https_port ${httpsPort}`,
  ];
  if (!/^\{\n/.test(caddyfile)) throw new Error('the Caddyfile must start with its global options block');
  writeFileSync(path.join(dir, 'Caddyfile'), caddyfile.replace(/^\{\n/, `{\n${testOptions.map((o) => `\t${o}\n`).join('')}`));

  const dataDir = path.join(dir, 'data');
  const child = spawn(CADDY, ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_DATA_HOME: dataDir, XDG_CONFIG_HOME: path.join(dir, 'config') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Should the test process die without its teardown, Caddy must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await halt(child, exited);
    rmSync(dir, { recursive: true, force: true });
  };

  const rootPath = path.join(dataDir, 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  const deadline = Date.now() + timeoutMs;
  while (!(existsSync(rootPath) && (await accepts(httpsPort)))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`caddy did not start in ${timeoutMs} ms:\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { httpsPort, rootCa: readFileSync(rootPath, 'utf8'), dataDir, logs: () => logs, stop };
}

/** SIGTERM, then SIGKILL if it is still there after 5 s. */
async function halt(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
