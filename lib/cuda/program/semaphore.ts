// A counting semaphore: how compileMany bounds the programs compiling at once, and a compile
// the ptxas children of its targets.

/** At most `limit` holders at once; waiters are served first come, first served. */
export class Semaphore {
  #free: number
  readonly #waiting: Array<() => void> = []
  constructor(limit: number) {
    this.#free = limit
  }
  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--
      return Promise.resolve()
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }
  release(): void {
    const next = this.#waiting.shift()
    if (next !== undefined) next()
    else this.#free++
  }
}
