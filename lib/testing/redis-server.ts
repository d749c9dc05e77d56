import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import { freePort } from "../dev/embedded-postgres";
import { sleep } from "./postgres-cluster";

/** Debian's Redis (apt-get install redis-server). */
export const REDIS_BIN = "/usr/bin/redis-server";
export const hasRedis = () => existsSync(REDIS_BIN);

export type RedisServer = {
  url: string;
  /** Starts it again after a stop or a kill, on the same port (empty: it keeps nothing on disk). */
  start(): Promise<void>;
  /** SIGKILL: what a crash or a lost node does to the counters it held. */
  kill(): Promise<void>;
  stop(): Promise<void>;
};

/** A Redis server of its own on 127.0.0.1 and a free port, in memory only. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const alive = () => child !== null && child.exitCode === null && child.signalCode === null;
  const start = async () => {
    if (alive()) return;
    let output = "";
    const started = spawn(
      REDIS_BIN,
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child = started;
    started.stdout!.on("data", (c: Buffer) => (output += c));
    started.stderr!.on("data", (c: Buffer) => (output += c));
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on ${port}:\n${output}`);
      await sleep(50);
    }
  };
  const end = (signal: NodeJS.Signals) => async () => {
    const running = child;
    if (!running || !alive()) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill(signal);
    });
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, kill: end("SIGKILL"), stop: end("SIGTERM") };
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
  });
}
