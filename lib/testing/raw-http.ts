import { once, EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";

export type RawResponse = { status: number; headers: http.IncomingHttpHeaders; text: string };

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/**
 * An HTTP request with the path sent exactly as given: fetch() would normalise `..`, re-encode
 * characters and refuse some methods, which is precisely what a fuzzer must not have done for it.
 */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    // Node frames a DELETE body only with an explicit length; without one the bytes would be read as the next request.
    const headers =
      options.body === undefined
        ? options.headers
        : { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) };
    const req = http.request(
      { agent, hostname, port, method: options.method ?? "GET", path: options.path, headers },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

export type StreamedBodyAnswer = {
  status: number;
  /** The answer's head and body as received (a chunked answer's framing left in). */
  text: string;
  /** Bytes of the body the client had sent when the first byte of the answer arrived. */
  sentWhenAnswered: number;
  /** Whether the server closed the connection (rather than the client, after waiting for it). */
  closedByServer: boolean;
};

/**
 * A request whose body is sent in 64 KiB pieces over a plain socket, waiting for the server to
 * take each (so a server that stops reading stops the sender), until `total` bytes are sent or an
 * answer arrives: with `Transfer-Encoding: chunked`, or, when `declared`, a Content-Length of
 * `total`. Says how much of the body had been sent when the answer came, which tells a server that
 * refused early from one that read the whole body first.
 */
export async function sendLargeBody(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; total: number; declared?: boolean },
): Promise<StreamedBodyAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  socket.on("error", () => {});
  await once(socket, "connect");
  const received: Buffer[] = [];
  let sent = 0;
  let sentWhenAnswered = -1;
  const progress = new EventEmitter();
  socket.on("data", (chunk: Buffer) => {
    if (sentWhenAnswered < 0) sentWhenAnswered = sent;
    received.push(chunk);
    progress.emit("step");
    progress.emit("received");
  });
  let closed = false;
  socket.on("close", () => {
    closed = true;
    progress.emit("step");
    progress.emit("received");
  });
  socket.on("drain", () => progress.emit("step"));
  const head = [
    `${options.method ?? "POST"} ${options.path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    options.declared ? `Content-Length: ${options.total}` : "Transfer-Encoding: chunked",
    "",
    "",
  ].join("\r\n");
  socket.write(head);
  const piece = Buffer.alloc(64 * 1024, 0x20);
  const framed = options.declared
    ? piece
    : Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]);
  while (sent < options.total && sentWhenAnswered < 0 && !closed) {
    const more = socket.write(framed);
    sent += piece.length;
    if (!more) await once(progress, "step");
  }
  if (sentWhenAnswered < 0 && !closed && !options.declared) socket.write("0\r\n\r\n");
  // The whole answer: until the server closes the connection, or 3 s without a byte more once it
  // began (30 s for it to begin).
  const deadline = Date.now() + 30_000;
  while (!closed && Date.now() < deadline) {
    const before = received.length;
    await Promise.race([once(progress, "received"), new Promise((resolve) => setTimeout(resolve, 3000))]);
    if (received.length === before && sentWhenAnswered >= 0) break;
  }
  const closedByServer = closed;
  socket.destroy();
  const text = Buffer.concat(received).toString("utf8");
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, sentWhenAnswered, closedByServer };
}

/** The resident memory of a process on this machine, in bytes (Linux). */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) * 1024;
}
