// The one decoder of wait statuses and the one table of signal names, taken at load time from
// Node (os.constants.signals) and the C library (sigabbrev_np / sigdescr_np), so names match what
// Node reports and strsignal texts match the platform.
import { constants as osConstants } from 'node:os'
import { native } from './native.js'
import { invalidType, outOfRange } from '../errors.js'
import type { WaitStatus } from './types.js'

const nameByNumber = new Map<number, string>()
const numberByName = new Map<string, number>()
const descriptionByNumber = new Map<number, string>()
// A number is reported by Node's name for it where Node has one (the first of its names in
// os.constants.signals, which is what child_process reports: SIGIO for 29, SIGABRT for 6), else
// by the C library's. Every name either gives is accepted, and so are <signal.h>'s other aliases.
for (const [name, num] of Object.entries(osConstants.signals)) {
  if (!nameByNumber.has(num)) nameByNumber.set(num, name)
  numberByName.set(name, num)
}
for (const [num, name, description] of native.signals) {
  if (!nameByNumber.has(num)) nameByNumber.set(num, name)
  if (!numberByName.has(name)) numberByName.set(name, num)
  descriptionByNumber.set(num, description)
}
for (const [alias, of] of [['SIGCLD', 'SIGCHLD'], ['SIGIOT', 'SIGABRT'], ['SIGPOLL', 'SIGIO']] as const) {
  const num = numberByName.get(of)
  if (num !== undefined && !numberByName.has(alias)) numberByName.set(alias, num)
}

// The real-time signals are also named by their offset from either end, as glibc's str2sig and
// kill(1) take them: SIGRTMIN+n and SIGRTMAX-n, n from 0 to SIGRTMAX - SIGRTMIN (SIGRTMAX-1 is
// SIGRTMIN+29 where SIGRTMIN is 34 and SIGRTMAX 64). A number is named one way only, the C
// library's (sigabbrev_np): SIGRTMIN, SIGRTMIN+1 ... SIGRTMIN+29, SIGRTMAX, never SIGRTMAX-n, so
// that a name signalName gives is the name a ChildResult gives and reads back as its number.
const RTMIN = numberByName.get('SIGRTMIN')
const RTMAX = numberByName.get('SIGRTMAX')

/** The largest n of SIGRTMIN+n and SIGRTMAX-n (SIGRTMAX - SIGRTMIN); -1 with no real-time signals. */
export const REAL_TIME_OFFSETS = RTMIN === undefined || RTMAX === undefined ? -1 : RTMAX - RTMIN

/**
 * A real-time signal named by its offset ('SIGRTMIN+3', 'RTMAX-1'): its number; null when n is
 * past REAL_TIME_OFFSETS (no signal of that name); undefined for a name of any other form.
 */
export function realTimeSignal(name: string): number | null | undefined {
  const match = /^(?:SIG)?RT(MIN\+|MAX-)(\d+)$/.exec(name)
  if (match === null || RTMIN === undefined || RTMAX === undefined) return undefined
  const n = Number(match[2])
  if (n > REAL_TIME_OFFSETS) return null
  return match[1] === 'MIN+' ? RTMIN + n : RTMAX - n
}

/**
 * The largest number a signal could ever have: INT_MAX, as kill(2) and strsignal(3) take a signal
 * as a C int. No kernel has one near it (Linux stops at 64), so 99 is still 'SIG99', but 1e21 is
 * no signal of any platform and read 'SIG1e+21'.
 */
const MAX_SIGNAL_NUMBER = 2 ** 31 - 1

/** A signal number as signalName and signalDescription take it: an integer from 0 to INT_MAX. */
function requireSignalNumber(value: unknown): number {
  if (typeof value !== 'number') throw invalidType('signal', 'a number', value)
  if (!Number.isInteger(value) || value < 0) throw outOfRange('signal', 'a non-negative integer', value)
  if (value > MAX_SIGNAL_NUMBER) throw outOfRange('signal', `at most ${MAX_SIGNAL_NUMBER}`, value)
  return value
}

/** Whether the platform has a signal of that number: one the table names. */
export function isKnownSignal(signal: number): boolean {
  return nameByNumber.has(signal)
}

/**
 * 'SIGSEGV' for 11; `SIG<n>` for a number the platform has no name for (SIG32, the C library's
 * own). A real-time signal is SIGRTMIN+n, or SIGRTMAX (above). Anything but a non-negative
 * integer is refused: 'SIG1.5' or 'SIG-1' named no signal.
 */
export function signalName(signal: number): string {
  requireSignalNumber(signal)
  return nameByNumber.get(signal) ?? `SIG${signal}`
}

/**
 * The number of a signal name ('SIGTERM' or 'TERM', 'SIGRTMAX-1'), or undefined for a name the
 * platform has no signal of (a real-time offset past SIGRTMAX included). A name is a string.
 */
export function signalNumber(name: string): number | undefined {
  if (typeof name !== 'string') throw invalidType('name', 'a string', name)
  return numberByName.get(name) ?? numberByName.get(`SIG${name}`) ?? realTimeSignal(name) ?? undefined
}

/** strsignal's text: 'Segmentation fault' for 11; 'Unknown signal 99' for a number with no signal, as strsignal says it. */
export function signalDescription(signal: number): string {
  requireSignalNumber(signal)
  return descriptionByNumber.get(signal) ?? `Unknown signal ${signal}`
}

/** Decodes a raw wait status word (as from wait4) by the POSIX rules. */
export function decodeWaitStatus(status: number): WaitStatus {
  if (typeof status !== 'number') throw invalidType('status', 'an integer', status)
  if (!Number.isInteger(status) || status < 0 || status > 0xffffffff) {
    throw outOfRange('status', 'an integer from 0 to 0xffffffff', status)
  }
  const low = status & 0x7f
  if (low === 0) return { kind: 'exited', exitCode: (status >> 8) & 0xff }
  if ((status & 0xffff) === 0xffff) return { kind: 'continued' }
  if ((status & 0xff) === 0x7f) {
    const sig = (status >> 8) & 0xff
    return { kind: 'stopped', signal: signalName(sig), signalNumber: sig }
  }
  return { kind: 'signaled', signal: signalName(low), signalNumber: low, coreDumped: (status & 0x80) !== 0 }
}
