// One reading of a tool's ChildResult, shared by the ptxas and nvdisasm adapters: tileiras's
// exit-status table (docs/toolchain-contract.md, "Exit statuses").
//
//   exit 0        success
//   exit 1..255   the tool failed; its stderr is the diagnostic, verbatim
//   126 / 127     could not be executed / not found: a deployment problem, never "ptxas crashed";
//                 when the harness saw the exec fail, the message says which program, what
//                 failed and the errno's text ("failed to run 'x': Exec format error (no #! line?)")
//   signal        the harness's strsignal text, " (core dumped)" included
//   timeout       "Child timed out" (or "... but wouldn't die"); the child is already reaped
//   abort         (async only) the caller's AbortSignal fired and the harness killed the child
//
// No retries and no partial output follow from any of these; that is the callers' job to keep.

import { DIAGNOSTIC } from '../spawn/index.js'
import { invalidType, isRecord, own, requireObject, requirePath, requireString } from '../errors.js'
import type { ChildResult } from '../spawn/types.js'
import { spawnFailureMessage, spawnedCwd, type SpawnedEnv } from '../spawn-failure.js'

export type ToolStatus =
  | 'ok'
  | 'failed'
  | 'not-executable'
  | 'not-found'
  | 'signaled'
  | 'timed-out'
  | 'aborted'
  | 'spawn-failed'

export interface ToolVerdict {
  status: ToolStatus
  /** One line saying what happened, '' on success. Never a rewrite of the tool's own stderr. */
  message: string
}

/**
 * `tool` names the tool in the messages; `spawned` is what was started (a path, and the child's
 * environment), which a message about a failed start names and reads its hint from.
 */
export function decodeToolResult(tool: string, result: ChildResult, spawned: { file: string | URL; env?: SpawnedEnv; cwd?: string | URL | null } = { file: tool }): ToolVerdict {
  requireString('tool', tool)
  requireObject('result', result)
  requireObject('spawned', spawned)
  // What was started, by its own fields (the message names that, never an inherited one), each a
  // path or a file: URL of one: checked before the result is read, whatever the result says.
  const file = requirePath('spawned.file', own(spawned, 'file'))
  const cwd = spawnedCwd(spawned, 'spawned.cwd')
  resultShape(result)
  if (result.aborted) return { status: 'aborted', message: result.diagnostic || DIAGNOSTIC.aborted }
  if (result.timedOut) return { status: 'timed-out', message: result.diagnostic || DIAGNOSTIC.timedOut }
  const spawnError = result.spawnError
  if (spawnError !== null) {
    const message = spawnFailureMessage(file, spawnError, { env: own(spawned, 'env') as SpawnedEnv | undefined, cwd })
    // E2BIG fails at exec too, but says nothing about the program: the argv was too big.
    if (spawnError.stage === 'exec' && spawnError.code === 'E2BIG') return { status: 'spawn-failed', message }
    if (spawnError.stage === 'exec') return { status: spawnError.code === 'ENOENT' ? 'not-found' : 'not-executable', message }
    return { status: 'spawn-failed', message }
  }
  if (result.signal !== null) {
    const core = result.coreDumped ? ' (core dumped)' : ''
    return { status: 'signaled', message: result.diagnostic || `${tool} was killed by ${result.signal}${core}` }
  }
  switch (result.exitCode) {
    case 0:
      return { status: 'ok', message: '' }
    // The shell-style codes, from a wrapper script or a shell that could not exec the tool.
    case 126:
      return { status: 'not-executable', message: result.diagnostic || DIAGNOSTIC.couldNotExecute }
    case 127:
      return { status: 'not-found', message: result.diagnostic || DIAGNOSTIC.notFound }
    default:
      return { status: 'failed', message: result.diagnostic || `${tool} exited with status ${result.exitCode}` }
  }
}

/**
 * The fields of a ChildResult this reads, each by its own kind: one made by hand ({}, or with a
 * spawnError of the wrong shape) was read as far as it went, and failed with V8's uncoded
 * TypeError (decodeToolResult('ptxas', {}) read spawnError undefined as a failed start).
 */
const RESULT_FIELDS: ReadonlyArray<[keyof ChildResult, string, (v: unknown) => boolean]> = [
  ['aborted', 'a boolean', (v) => typeof v === 'boolean'],
  ['timedOut', 'a boolean', (v) => typeof v === 'boolean'],
  ['coreDumped', 'a boolean', (v) => typeof v === 'boolean'],
  ['diagnostic', 'a string', (v) => typeof v === 'string'],
  ['signal', 'a string or null', (v) => v === null || typeof v === 'string'],
  ['exitCode', 'a number or null', (v) => v === null || typeof v === 'number'],
  ['spawnError', 'an object or null', (v) => v === null || isRecord(v)],
]

function resultShape(result: ChildResult): void {
  for (const [field, expected, ok] of RESULT_FIELDS) {
    const value = own(result, field)
    if (!ok(value)) throw invalidType(`result.${field}`, expected, value)
  }
  const spawnError = result.spawnError
  if (spawnError === null) return
  for (const field of ['stage', 'code', 'message'] as const) {
    if (typeof own(spawnError, field) !== 'string') throw invalidType(`result.spawnError.${field}`, 'a string', own(spawnError, field))
  }
  if (typeof own(spawnError, 'errno') !== 'number') throw invalidType('result.spawnError.errno', 'a number', own(spawnError, 'errno'))
}
