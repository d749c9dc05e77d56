// Next runs register() once per server process, before it serves: the place for hooks on Node's HTTP server.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { guardRequests } = await import("./lib/http/request-guard");
  guardRequests();
}
