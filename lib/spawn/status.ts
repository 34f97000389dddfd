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

/** 'SIGSEGV' for 11; `SIG<n>` for a number the platform has no name for. */
export function signalName(signal: number): string {
  return nameByNumber.get(signal) ?? `SIG${signal}`
}

/** The number of a signal name ('SIGTERM' or 'TERM'), or undefined. */
export function signalNumber(name: string): number | undefined {
  return numberByName.get(name) ?? numberByName.get(`SIG${name}`)
}

/** strsignal's text: 'Segmentation fault' for 11. */
export function signalDescription(signal: number): string {
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
