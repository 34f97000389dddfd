// Was the machine busy while `tileharness bench` ran? Other work competing for the CPUs makes the
// runs slower and noisier, and a reader should know before trusting the figures. The readings are
// taken by the command (loadReading) and judged here by a pure function, so tests inject them.
import os from 'node:os'

/** What the system said about its load at one moment. */
export interface LoadReading {
  /** The 1-minute load average (os.loadavg()[0]): runnable and uninterruptible tasks, smoothed. */
  loadAverage: number
  /** CPUs this process may run on (os.availableParallelism()). */
  parallelism: number
}

export function loadReading(): LoadReading {
  return { loadAverage: os.loadavg()[0], parallelism: os.availableParallelism() }
}

export interface MachineLoad {
  start: LoadReading
  end: LoadReading
  /** Other work held more CPUs than the benchmark could spare (BUSY_RULE). */
  busy: boolean
  /** The warning the summary prints; null when not busy. */
  warning: string | null
}

export const BUSY_RULE = 'the 1-minute load average, less the benchmark\'s own 1 at the end, above the CPUs less one (at least 1)'

/**
 * Judge the readings taken before the first run and after the last. The benchmark itself keeps
 * one CPU busy (the command, or this process between runs), so other work may hold the rest,
 * parallelism - 1 of them (at least 1, on one CPU), before the runs compete with it. At the end
 * the load average includes the benchmark's own load (up to 1, less for a short benchmark, since
 * the average is smoothed over a minute), so 1 is taken off there: a rule that errs toward silence.
 */
export function machineLoad(start: LoadReading, end: LoadReading): MachineLoad {
  const spare = (r: LoadReading) => Math.max(1, r.parallelism - 1)
  const busy = start.loadAverage > spare(start) || end.loadAverage - 1 > spare(end)
  const cpus = start.parallelism === end.parallelism ? `${end.parallelism}` : `${start.parallelism}-${end.parallelism}`
  const warning = busy
    ? `the machine was busy: load average ${start.loadAverage.toFixed(2)} at the start and ${end.loadAverage.toFixed(2)} at the end on ${cpus} CPU${cpus === '1' ? '' : 's'}; ` +
      'other work competed with the runs, so the figures may be slower and noisier than on a quiet machine'
    : null
  return { start, end, busy, warning }
}
