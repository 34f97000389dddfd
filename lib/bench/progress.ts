// The progress bar of `tileharness bench`: one line on stderr, redrawn in place, only when stderr
// is a terminal (a pipe or a file gets nothing, so logs stay clean).

export interface ProgressState {
  phase: 'warmup' | 'measuring'
  done: number
  total: number
  /** Milliseconds since the phase began. */
  elapsedMs: number
  /** The command running now. */
  command: string
}

const BAR = 24

function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  return s >= 3600 ? `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`
    : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}

/** One line, at most `columns` characters, no escape sequences. */
export function renderProgress(p: ProgressState, columns = 80): string {
  const filled = p.total > 0 ? Math.round((p.done / p.total) * BAR) : 0
  const bar = '█'.repeat(filled) + '░'.repeat(BAR - filled)
  const eta = p.done > 0 && p.done < p.total ? `  ETA ${clock((p.elapsedMs / p.done) * (p.total - p.done))}` : ''
  const head = `${p.phase === 'warmup' ? 'warmup   ' : 'measuring'} ${bar} ${p.done}/${p.total}${eta}  `
  const room = columns - 1 - [...head].length
  const chars = [...p.command]
  const name = room <= 3 ? '' : chars.length <= room ? p.command : chars.slice(0, room - 1).join('') + '…'
  return head + name
}

/** Draws renderProgress on a TTY stream, redrawn twice a second so the ETA moves during a long
 * run; a no-op on anything else. */
export class ProgressBar {
  private readonly tty: boolean
  private started = 0
  private state: Omit<ProgressState, 'elapsedMs'> | null = null
  private timer: NodeJS.Timeout | null = null

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.tty = stream.isTTY === true
  }

  /** A new phase: the ETA counts from now. */
  begin(): void {
    this.started = performance.now()
  }

  update(p: Omit<ProgressState, 'elapsedMs'>): void {
    if (!this.tty) return
    this.state = p
    this.draw()
    if (this.timer === null) this.timer = setInterval(() => this.draw(), 500).unref()
  }

  /** Erases the line and stops redrawing. */
  clear(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
    if (this.state !== null) this.stream.write('\r\x1b[K')
    this.state = null
  }

  private draw(): void {
    if (this.state === null) return
    const line = renderProgress({ ...this.state, elapsedMs: performance.now() - this.started }, this.stream.columns || 80)
    this.stream.write(`\r\x1b[K${line}`)
  }
}
