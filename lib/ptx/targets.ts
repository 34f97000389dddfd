// The one table of PTX ISA versions per target. Each value is the lowest `.version` that ptxas 13.0
// accepts for that `.target`, measured on this project's machines (docs/toolchain-contract.md,
// "Measured: ptxas 13.0"); the test/ptx/targets test re-measures every row against the real ptxas
// when it is on PATH.
import { ptxRangeError, ptxTypeError } from './errors.js'

export const PTX_ISA_BY_TARGET = Object.freeze({
  sm_90: '7.8',
  sm_90a: '8.0',
  sm_100: '8.6',
  sm_100a: '8.6',
  sm_100f: '8.8',
  sm_103: '8.8',
  sm_103a: '8.8',
  sm_103f: '8.8',
  // sm_110 needs 9.0, so its a and f variants do too: a variant never needs less than its base.
  sm_110: '9.0',
  sm_110a: '9.0',
  sm_110f: '9.0',
  sm_120: '8.7',
  sm_120a: '8.7',
  sm_120f: '8.8',
  sm_121: '8.8',
  sm_121a: '8.8',
  sm_121f: '8.8',
} as const)

/** A `.target` this emitter knows: sm_90 and newer, with their `a` and `f` variants. */
export type GpuName = keyof typeof PTX_ISA_BY_TARGET

/** The newest `.version` ptxas 13.0 accepts ("Unsupported .version 9.1; current version is '9.0'"). */
export const PTX_ISA_MAX = '9.0'

/** `.blocksareclusters` is a PTX ISA 9.0 feature (ptxas: "requires PTX ISA .version 9.0 or later"). */
export const PTX_ISA_BLOCKS_ARE_CLUSTERS = '9.0'

/**
 * The `.b128` type, declared or as an instruction type, is a PTX ISA 8.3 feature (ptxas 13.0:
 * "Feature 'Type .b128' requires PTX ISA .version 8.3 or later"): above the lowest version of
 * sm_90 (7.8) and sm_90a (8.0).
 */
export const PTX_ISA_B128 = '8.3'

/**
 * Every PTX ISA version ptxas 13.0 accepts, oldest first (`ptxas --list-version`; the targets test
 * compares the two). The gaps (7.9, 8.9) are rejected here with a clear message instead of by ptxas.
 */
export const PTX_ISA_VERSIONS: readonly string[] = Object.freeze([
  '1.0', '1.1', '1.2', '1.3', '1.4', '1.5',
  '2.0', '2.1', '2.2', '2.3',
  '3.0', '3.1', '3.2',
  '4.0', '4.1', '4.2', '4.3',
  '5.0', '5.1',
  '6.0', '6.1', '6.2', '6.3', '6.4', '6.5',
  '7.0', '7.1', '7.2', '7.3', '7.4', '7.5', '7.6', '7.7', '7.8',
  '8.0', '8.1', '8.2', '8.3', '8.4', '8.5', '8.6', '8.7', '8.8',
  '9.0',
])
const KNOWN_PTX_ISA_VERSIONS: ReadonlySet<string> = new Set(PTX_ISA_VERSIONS)

export function gpuNames(): GpuName[] {
  return Object.keys(PTX_ISA_BY_TARGET) as GpuName[]
}

export function isGpuName(value: unknown): value is GpuName {
  return typeof value === 'string' && Object.hasOwn(PTX_ISA_BY_TARGET, value)
}

/** Throws unless `value` is a known target; `field` names it in the message. */
export function checkGpuName(value: unknown, field = 'target'): GpuName {
  if (typeof value !== 'string') throw ptxTypeError(field, 'a GPU name such as "sm_100"', value)
  if (!isGpuName(value)) {
    throw ptxRangeError('ERR_PTX_UNKNOWN_TARGET', field,
      `unknown GPU target ${JSON.stringify(value)}; known: ${gpuNames().join(', ')}`)
  }
  return value
}

/** The lowest PTX ISA version ptxas 13.0 accepts for `gpu`, e.g. ptxIsaFor('sm_103') === '8.8'. */
export function ptxIsaFor(gpu: GpuName | string): string {
  return PTX_ISA_BY_TARGET[checkGpuName(gpu, 'gpu')]
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b` ("8.8" < "9.0"). */
export function comparePtxIsa(a: string, b: string): number {
  const [aMajor, aMinor] = splitVersion(a)
  const [bMajor, bMinor] = splitVersion(b)
  return aMajor !== bMajor ? aMajor - bMajor : aMinor - bMinor
}

/** Throws unless `version` is a released PTX ISA version no newer than ptxas 13.0 accepts. */
export function checkPtxIsa(version: unknown, field = 'version'): string {
  if (typeof version !== 'string') throw ptxTypeError(field, 'a PTX ISA version such as "8.8"', version)
  if (!KNOWN_PTX_ISA_VERSIONS.has(version)) {
    throw ptxRangeError('ERR_PTX_UNKNOWN_VERSION', field,
      `${JSON.stringify(version)} is not a PTX ISA version ptxas 13.0 accepts (see PTX_ISA_VERSIONS; the newest is ${PTX_ISA_MAX})`)
  }
  return version
}

/**
 * The `.version` to print for `gpu`: `explicit` when given (an error before ptxas ever runs if it is
 * too old for the target), else the lowest the target accepts, raised to `featureFloor` when the
 * module uses a newer feature. An explicit version is never raised: the caller asked for it.
 */
export function resolvePtxIsa(gpu: GpuName, explicit: string | undefined, featureFloor?: string): string {
  const lowest = PTX_ISA_BY_TARGET[gpu]
  if (explicit !== undefined) {
    checkPtxIsa(explicit)
    if (comparePtxIsa(explicit, lowest) < 0) {
      throw ptxRangeError('ERR_PTX_VERSION_TOO_OLD', 'version',
        `PTX ISA ${explicit} is too old for target ${gpu}, which needs PTX ISA ${lowest} or newer`)
    }
    return explicit
  }
  return featureFloor !== undefined && comparePtxIsa(featureFloor, lowest) > 0 ? featureFloor : lowest
}

function splitVersion(version: string): [number, number] {
  const match = /^(\d+)\.(\d+)$/.exec(version)
  if (match === null) throw ptxRangeError('ERR_PTX_UNKNOWN_VERSION', 'version', `malformed PTX ISA version ${JSON.stringify(version)}`)
  return [Number(match[1]), Number(match[2])]
}
