// A progress bar on stderr, drawn only when stderr is a terminal (never into a
// pipe or a log), redrawn when its whole percentage changes.

const WIDTH = 30;

export class ProgressBar {
  private readonly tty = process.stderr.isTTY === true;
  private shown = -1;
  private drawn = false;

  constructor(private readonly label: string, private readonly unit: string) {}

  /** `done` of `total` so far. */
  update(done: number, total: number): void {
    if (!this.tty) return;
    const percent = total === 0 ? 100 : Math.min(100, Math.floor((done * 100) / total));
    if (percent === this.shown) return;
    this.shown = percent;
    this.drawn = true;
    const filled = Math.round((WIDTH * percent) / 100);
    process.stderr.write(`\r${this.label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(percent).padStart(3)}% ${done}/${total} ${this.unit}`);
  }

  /** Ends the bar's line, if one was drawn. */
  end(): void {
    if (this.drawn) process.stderr.write('\n');
    this.drawn = false;
  }
}
