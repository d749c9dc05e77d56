import http from "node:http";

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
