import { showUnsafe } from "../characters";
import { bytes, duration } from "./format";

type Stream = { write(text: string): unknown; isTTY?: boolean; columns?: number };

/**
 * Files, bytes, rate and ETA on stderr. On a terminal one line is redrawn in place (at most ten
 * times a second); in a log, a line is written every few seconds instead.
 */
export class Progress {
  private filesDone = 0;
  private bytesDone = 0;
  private received = 0;
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;
  private samples: { at: number; received: number }[] = [];

  constructor(
    private readonly totalFiles: number,
    private readonly totalBytes: number,
    private readonly out: Stream = process.stderr,
    private readonly interval = out.isTTY ? 100 : 5000,
  ) {}

  /** Bytes received from the network. */
  bytes(n: number): void {
    this.received += n;
    this.bytesDone += n;
    this.draw();
  }

  /** Bytes already on disk from an earlier run, now counted as done. */
  credit(n: number): void {
    this.bytesDone += n;
  }

  fileDone(): void {
    this.filesDone++;
    this.draw();
  }

  /** A message above the bar. */
  log(line: string): void {
    this.clear();
    // Lines name files and downloads as the server sent them: shown escaped, never as control sequences.
    this.out.write(`${showUnsafe(line)}\n`);
    this.draw(true);
  }

  /** Bytes per second over the last ten seconds. */
  rate(): number {
    const now = Date.now();
    this.samples.push({ at: now, received: this.received });
    while (this.samples.length > 2 && now - this.samples[0]!.at > 10_000) this.samples.shift();
    const first = this.samples[0]!;
    const seconds = (now - first.at) / 1000;
    return seconds > 0.2
      ? (this.received - first.received) / seconds
      : this.received / Math.max(0.001, (now - this.started) / 1000);
  }

  line(): string {
    const rate = this.rate();
    const remaining = Math.max(0, this.totalBytes - this.bytesDone);
    const share = this.totalBytes
      ? Math.min(1, this.bytesDone / this.totalBytes)
      : this.totalFiles
        ? this.filesDone / this.totalFiles
        : 1;
    const width = 24;
    const filled = Math.round(share * width);
    const bar = `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
    const eta = rate > 0 ? duration(remaining / rate) : "--:--";
    return `${bar} ${this.filesDone}/${this.totalFiles} files  ${bytes(Math.min(this.bytesDone, this.totalBytes))}/${bytes(this.totalBytes)}  ${bytes(Math.round(rate))}/s  ETA ${eta}`;
  }

  draw(force = false): void {
    const now = Date.now();
    if (!force && now - this.lastDraw < this.interval) return;
    this.lastDraw = now;
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${this.line().slice(0, (this.out.columns ?? 120) - 1)}`);
      this.drawn = true;
    } else if (!force) {
      this.out.write(`${this.line()}\n`);
    }
  }

  /** The final state, then the cursor on a new line. */
  finish(): void {
    if (this.out.isTTY) {
      this.draw(true);
      this.out.write("\n");
      this.drawn = false;
    } else {
      this.out.write(`${this.line()}\n`);
    }
  }

  private clear(): void {
    if (this.out.isTTY && this.drawn) this.out.write("\r\x1b[2K");
  }
}
