// Launch-bound normalization before PTX printing (docs/toolchain-contract.md, "Launch bounds"):
// the directive emission paths of a producer are independent, so nothing stops a caller from asking
// for combinations ptxas rejects. Every rule below is one ptxas 13.0 enforces, as measured there;
// each one drops the losing directive and says so in a PtxWarning instead of letting ptxas fail.
//
//   rule                                       ptxas 13.0 without normalization
//   .maxntid with .reqntid -> keep .reqntid    error "Conflicting directives: .maxntid and .reqntid ..."
//   .maxclusterrank with .reqnctapercluster    error "Conflicting directives: .reqnctapercluster and
//     -> keep .reqnctapercluster                      .maxclusterrank cannot both be specified"
//   .blocksareclusters without .reqntid and    error ".reqntid and .reqnctapercluster directive(s)
//     .reqnctapercluster -> drop it                    required for directive '.blocksareclusters'"
//   .blocksareclusters below PTX ISA 9.0       error "Feature '.blocksareclusters' requires PTX ISA
//     -> drop it (only when .version is given;        .version 9.0 or later"
//     an inferred version is raised instead)
//   .minnctapersm without .maxntid/.reqntid    warning ".minnctapersm is ignored when neither .maxntid
//     -> drop it                                       nor .reqntid is specified."
//   any directive on a .func -> drop it        fatal "Parsing error near '.maxntid': syntax error"
//
// The cluster directives' other prerequisites (sm_90 and PTX ISA 7.8) hold by construction: every
// target this emitter knows is sm_90 or newer, and no accepted .version is below 7.8 for any of them
// (checkGpuName and resolvePtxIsa reject the rest before we get here).
import { ownElements, ownFields } from '../errors.js'
import { ptxRangeError, ptxTypeError } from './errors.js'
import { PTX_ISA_BLOCKS_ARE_CLUSTERS, checkGpuName, comparePtxIsa, resolvePtxIsa } from './targets.js'
import type { Dim3, LaunchBounds, PtxEntry, PtxFunction, PtxModule } from './types.js'

export type PtxWarningCode =
  | 'PTX_MAXNTID_WITH_REQNTID'
  | 'PTX_MAXCLUSTERRANK_WITH_REQNCTAPERCLUSTER'
  | 'PTX_BLOCKSARECLUSTERS_WITHOUT_PREREQUISITES'
  | 'PTX_BLOCKSARECLUSTERS_NEEDS_PTX_9_0'
  | 'PTX_MINNCTAPERSM_WITHOUT_NTID'
  | 'PTX_DIRECTIVE_ON_FUNC'

export interface PtxWarning {
  code: PtxWarningCode
  /** The function whose directive was dropped. */
  function: string
  /** The dropped directive, e.g. '.maxntid'. */
  dropped: string
  message: string
}

export interface NormalizedLaunchBounds {
  bounds: LaunchBounds
  warnings: PtxWarning[]
}

const UINT32_MAX = 0xffff_ffff

/**
 * Returns the directives of entry `functionName` that may be printed for PTX ISA `version`, and a
 * warning for each one dropped. `field` is where `bounds` sits in the caller's input, for errors.
 */
export function normalizeLaunchBounds(
  bounds: LaunchBounds,
  functionName: string,
  version: string,
  field = 'launchBounds',
): NormalizedLaunchBounds {
  const out = checkLaunchBounds(bounds, field)
  const warnings: PtxWarning[] = []
  const drop = (code: PtxWarningCode, dropped: keyof LaunchBounds, why: string): void => {
    delete out[dropped]
    warnings.push({ code, function: functionName, dropped: `.${dropped}`, message: `${functionName}: dropped .${dropped}: ${why}` })
  }

  // .reqntid wins: it states the exact CTA shape, so it already implies the bound .maxntid gives
  // (and more), and it is the directive .blocksareclusters depends on.
  if (out.maxntid !== undefined && out.reqntid !== undefined) {
    drop('PTX_MAXNTID_WITH_REQNTID', 'maxntid',
      `ptxas rejects .maxntid together with .reqntid; .reqntid ${dims(out.reqntid)} wins over .maxntid ${dims(out.maxntid)} because the exact CTA shape implies the bound`)
  }
  // .reqnctapercluster wins for the same reason: an exact cluster shape implies its rank bound.
  if (out.maxclusterrank !== undefined && out.reqnctapercluster !== undefined) {
    drop('PTX_MAXCLUSTERRANK_WITH_REQNCTAPERCLUSTER', 'maxclusterrank',
      `ptxas rejects .maxclusterrank together with .reqnctapercluster; .reqnctapercluster ${dims(out.reqnctapercluster)} wins over .maxclusterrank ${out.maxclusterrank} because the exact cluster shape implies the rank bound`)
  }
  if (out.blocksareclusters === true) {
    if (out.reqntid === undefined || out.reqnctapercluster === undefined) {
      drop('PTX_BLOCKSARECLUSTERS_WITHOUT_PREREQUISITES', 'blocksareclusters',
        'it needs both .reqntid and .reqnctapercluster')
    } else if (comparePtxIsa(version, PTX_ISA_BLOCKS_ARE_CLUSTERS) < 0) {
      drop('PTX_BLOCKSARECLUSTERS_NEEDS_PTX_9_0', 'blocksareclusters',
        `it needs PTX ISA ${PTX_ISA_BLOCKS_ARE_CLUSTERS} and the module asks for .version ${version}`)
    }
  }
  if (out.blocksareclusters === false) delete out.blocksareclusters
  if (out.explicitcluster === false) delete out.explicitcluster
  if (out.minnctapersm !== undefined && out.maxntid === undefined && out.reqntid === undefined) {
    drop('PTX_MINNCTAPERSM_WITHOUT_NTID', 'minnctapersm',
      'it is ignored without .maxntid or .reqntid (ptxas warns and ignores it)')
  }
  return { bounds: out, warnings }
}

export interface NormalizedModule {
  /** A copy of the input with `version` set and only printable directives left. */
  module: PtxModule & { version: string }
  /** The version is the module's own (else chosen from the target and the directives). */
  versionGiven: boolean
  warnings: PtxWarning[]
}

/**
 * Chooses the `.version` (see resolvePtxIsa) and normalizes the directives of every function.
 * Throws for a bad target, a bad or too-old explicit version, or malformed launch bounds.
 */
export function normalizeModule(given: PtxModule): NormalizedModule {
  if (typeof given !== 'object' || given === null) throw ptxTypeError('module', 'a PTX module object', given)
  // The module, its functions and their launch bounds by their own fields (ownFields): a version,
  // linkage or launchBounds inherited from a polluted Object.prototype is as if absent. Every index
  // of functions is read, a hole as undefined, to be refused: map skipped it.
  const module = ownFields(given)
  const target = checkGpuName(module.target, 'target')
  if (!Array.isArray(module.functions)) throw ptxTypeError('functions', 'an array of functions', module.functions)
  const functions = ownElements(module.functions as readonly PtxFunction[], 'functions').map((fn) => (typeof fn === 'object' && fn !== null ? ownFields(fn) : fn))

  // An inferred version is raised to 9.0 when some entry keeps .blocksareclusters; an explicit one
  // is respected, and the directive is dropped instead (normalizeLaunchBounds).
  const needsBlocksAreClusters = functions.some((fn) => {
    const declared = fn?.kind === 'entry' ? fn.launchBounds : undefined
    const b = typeof declared === 'object' && declared !== null ? ownFields(declared) : undefined
    return b?.blocksareclusters === true && b.reqntid !== undefined && b.reqnctapercluster !== undefined
  })
  const version = resolvePtxIsa(target, module.version,
    needsBlocksAreClusters ? PTX_ISA_BLOCKS_ARE_CLUSTERS : undefined)

  const warnings: PtxWarning[] = []
  const normalized = functions.map((fn, i): PtxFunction => {
    const field = `functions[${i}]`
    if (typeof fn !== 'object' || fn === null) throw ptxTypeError(field, 'an entry or func object', fn)
    if (fn.kind === 'entry') {
      if (fn.launchBounds === undefined) return fn
      const result = normalizeLaunchBounds(fn.launchBounds, String(fn.name), version, `${field}.launchBounds`)
      warnings.push(...result.warnings)
      const entry: PtxEntry = { ...fn, launchBounds: result.bounds }
      return entry
    }
    if (fn.kind === 'func') {
      // The type has no place for directives on a .func, but untyped callers can still pass them.
      const loose = fn as PtxFunction & { launchBounds?: LaunchBounds; pragmas?: readonly string[] }
      if (loose.launchBounds === undefined && loose.pragmas === undefined) return fn
      const { launchBounds, pragmas, ...rest } = loose
      if (pragmas !== undefined && !Array.isArray(pragmas)) throw ptxTypeError(`${field}.pragmas`, 'an array of pragma strings', pragmas)
      if (launchBounds !== undefined && (typeof launchBounds !== 'object' || launchBounds === null)) throw ptxTypeError(`${field}.launchBounds`, 'an object', launchBounds)
      const names = [
        ...Object.keys(launchBounds ?? {}).map((k) => `.${k}`),
        ...ownElements(pragmas ?? [], `${field}.pragmas`).map((p) => `.pragma "${String(p)}"`),
      ]
      for (const dropped of names) {
        warnings.push({
          code: 'PTX_DIRECTIVE_ON_FUNC', function: String(fn.name), dropped,
          message: `${String(fn.name)}: dropped ${dropped}: performance directives are only allowed on .entry functions`,
        })
      }
      return rest as PtxFunction
    }
    throw ptxRangeError('ERR_PTX_INVALID_VALUE', `${field}.kind`, `expected 'entry' or 'func', got ${JSON.stringify((fn as { kind?: unknown }).kind)}`)
  })
  return { module: { ...module, version, functions: normalized }, versionGiven: module.version !== undefined, warnings }
}

/** Checks the types and ranges of every directive value; returns a mutable copy. */
function checkLaunchBounds(given: LaunchBounds, field: string): LaunchBounds {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw ptxTypeError(field, 'an object of launch bounds', given)
  }
  const bounds = ownFields(given)
  const known: ReadonlySet<string> = new Set([
    'maxntid', 'reqntid', 'minnctapersm', 'maxnreg', 'reqnctapercluster', 'explicitcluster',
    'maxclusterrank', 'blocksareclusters',
  ])
  for (const key of Object.keys(bounds)) {
    if (!known.has(key)) throw ptxRangeError('ERR_PTX_INVALID_VALUE', `${field}.${key}`, 'not a performance directive this emitter knows')
  }
  // Without a prototype, as ownFields makes: the rules below read a directive not given as
  // undefined, never an inherited one.
  const out = Object.create(null) as LaunchBounds
  for (const key of ['maxntid', 'reqntid', 'reqnctapercluster'] as const) {
    const value = bounds[key]
    if (value !== undefined) out[key] = checkDim3(value, `${field}.${key}`)
  }
  for (const key of ['minnctapersm', 'maxnreg', 'maxclusterrank'] as const) {
    const value = bounds[key]
    if (value !== undefined) out[key] = checkCount(value, `${field}.${key}`)
  }
  for (const key of ['explicitcluster', 'blocksareclusters'] as const) {
    const value = bounds[key]
    if (value === undefined) continue
    if (typeof value !== 'boolean') throw ptxTypeError(`${field}.${key}`, 'a boolean', value)
    out[key] = value
  }
  return out
}

/** A 1-3 dimensional extent of positive 32-bit counts ("Positive non-zero value expected" otherwise). */
export function checkDim3(value: unknown, field: string): Dim3 {
  if (typeof value === 'number') return checkCount(value, field)
  if (!Array.isArray(value)) throw ptxTypeError(field, 'a positive integer or an array of 1 to 3 of them', value)
  if (value.length < 1 || value.length > 3) {
    throw ptxRangeError('ERR_PTX_INVALID_VALUE', field, `expected 1 to 3 dimensions, got ${value.length}`)
  }
  // Every dimension, a hole as undefined (refused): map skipped it, and `.maxntid , 32` was printed.
  return ownElements(value, field).map((n, i) => checkCount(n, `${field}[${i}]`)) as unknown as Dim3
}

export function checkCount(value: unknown, field: string): number {
  if (typeof value !== 'number') throw ptxTypeError(field, 'a positive integer', value)
  if (!Number.isInteger(value) || value < 1 || value > UINT32_MAX) {
    throw ptxRangeError('ERR_PTX_INVALID_VALUE', field, `expected an integer from 1 to ${UINT32_MAX}, got ${value}`)
  }
  return value
}

/** "256" or "16, 16, 1", as printed after the directive. */
export function dims(value: Dim3): string {
  return typeof value === 'number' ? String(value) : value.join(', ')
}
