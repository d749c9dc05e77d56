import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "../dev/embedded-postgres";
import { sleep } from "./postgres-cluster";

/** Debian's HAProxy (apt-get install haproxy). */
export const HAPROXY_BIN = "/usr/sbin/haproxy";
export const hasHaproxy = () => existsSync(HAPROXY_BIN);

export type LoadBalancer = { url: string; stop(): Promise<void>; log(): string };

/**
 * HAProxy in front of app instances on 127.0.0.1 `ports`, round robin, each checked every second
 * on the public OpenAPI document (three failures take it out, two answers put it back). It
 * appends X-Forwarded-For (the service trusts one proxy: TRUSTED_PROXIES=1), retries a request
 * on another instance only when the connection to one fails (a request already sent is never
 * sent twice: a download is not idempotent without its key), and names the instance that answered
 * in X-Served-By.
 */
export async function startLoadBalancer(ports: number[]): Promise<LoadBalancer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "das-haproxy-"));
  const config = path.join(dir, "haproxy.cfg");
  writeFileSync(config, haproxyConfig(port, ports));
  let output = "";
  // -db: in the foreground, its log on stderr.
  const child: ChildProcess = spawn(HAPROXY_BIN, ["-db", "-f", config], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (c: Buffer) => (output += c));
  child.stderr!.on("data", (c: Buffer) => (output += c));
  const deadline = Date.now() + 10_000;
  while (!(await accepting(port))) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`haproxy did not listen on ${port}:\n${output}`);
    await sleep(50);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null)
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The configuration the README's production section shows, on loopback ports. */
export function haproxyConfig(port: number, ports: number[]): string {
  return [
    "global",
    "  maxconn 4096",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 120s",
    "  timeout server 120s",
    "  timeout http-request 10s",
    "  retries 2",
    "  retry-on conn-failure",
    "  option redispatch",
    "frontend web",
    `  bind 127.0.0.1:${port}`,
    "  option forwardfor",
    "  default_backend app",
    "backend app",
    "  balance roundrobin",
    "  option httpchk",
    "  http-check send meth GET uri /api/v1/openapi.json ver HTTP/1.1 hdr Host 127.0.0.1",
    "  http-check expect status 200",
    "  http-response set-header X-Served-By %[srv_name]",
    // A check may take seconds on a busy machine (a server compiling, a loaded core): only three
    // failed in a row take an instance out, so that a slow answer is not mistaken for a dead one.
    "  timeout check 5s",
    ...ports.map((p, i) => `  server app${i + 1} 127.0.0.1:${p} check inter 1s fall 3 rise 2`),
    "",
  ].join("\n");
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
