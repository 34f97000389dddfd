// The compile pipeline of one program, in two halves (docs/toolchain-contract.md, "The ptxas
// child", "The SASS dump (nvdisasm)", "Cancellation and parallel compiles"):
//
//   assembleProgram  the children: PTX -> ptxas (runPtxasAsync) -> optional SASS dump
//                    (dumpWordsAsync). Never rejects: a failure comes back with the diagnostics
//                    gathered so far, so the second half can deliver them in order.
//   deliverDiagnostics, packageOutput
//                    the sequential half: the tools' stderr to onDiagnostic in the order they ran,
//                    then the host object (packageHostObject; packageCoffObject for windows).
//
// Plain functions of a checked configuration and its PTX, holding no state: the handle runs both
// halves one compile at a time (handle.ts); compileMany runs the first half of many programs in
// parallel and the second in input order (compile-many.ts). Any failure is status 5, with the
// tool's stderr verbatim in `diagnostics`.

import { availableParallelism } from 'node:os'
import { performance } from 'node:perf_hooks'
import { readCubin, type CubinKernel } from '../../elf/cubin.js'
import { packageCoffObject } from '../../elf/coff.js'
import { packageHostObject } from '../../elf/package.js'
import { own } from '../../errors.js'
import { DIAGNOSTIC } from '../../spawn/index.js'
import type { ChildResult, ChildRusage } from '../../spawn/types.js'
import { dumpCommandWords, dumpWordsAsync } from '../nvdisasm.js'
import { runFatbinaryAsync, type FatbinaryInput, type FatbinaryRun } from '../fatbinary.js'
import { runPtxasAsync, type InputRoute, type PtxasRun } from '../ptxas.js'
import { MAX_BASE_NAME_BYTES, TempFileError } from '../temp-file.js'
import { CUDA_ROOT_VARIABLES, findTool, type CudaTool, type Env, type ToolFinder } from '../toolkit.js'
import type { ResolvedConfig } from './config.js'
import { compileFailed, type ProgramTool } from './errors.js'
import { Semaphore } from './semaphore.js'

/** One child of the compile: what it was asked and what it cost (from wait4's rusage). */
export interface ToolRunSummary {
  argv: string[]
  /** The child's wall time, ms. */
  durationMs: number
  rusage: ChildRusage
  /** Its stderr, verbatim. */
  diagnostics: string
}

/** One target's cubin, of a compile for several (or with embedPtx). */
export interface TargetImage {
  gpuName: string
  /** Read back from the cubin, as ProgramOutput.arch. */
  arch: string
  sm: number
  cubin: Buffer
  kernels: CubinKernel[]
  ptxas: ProgramOutput['ptxas']
}

export interface ProgramOutput {
  /**
   * The host object, an ELF relocatable (hostOs linux) or a COFF object (windows): <name>_cubin,
   * <name>_cubin_size[, <name>_sass, <name>_sass_size]; for several targets (or with embedPtx)
   * <name>_fatbin and <name>_fatbin_size instead.
   */
  object: Buffer
  /** The (first) target's cubin. */
  cubin: Buffer
  /** The fat binary fatbinary made of every target's cubin (and the PTX), else null. */
  fatbin: Buffer | null
  /** Every target's cubin, in the order of gpuName's list (one entry for one target). */
  targets: TargetImage[]
  /** The dump command's stdout; null without a dumpSassCommand. */
  sass: string | null
  name: string
  /** The (first) target. */
  gpuName: string
  /** The SM the cubin is for, read back from it (100 for sm_100). */
  sm: number
  /** The target read back from the cubin, with its suffix: 'sm_100a' (lib/elf/cubin.ts says where). */
  arch: string
  /** The cubin's kernels: name, registers per thread, launch attributes. */
  kernels: CubinKernel[]
  /** This program's own compile time, ms (in compileMany: without the wait for the others). */
  wallMs: number
  /** The (first) target's ptxas run; each target's is in `targets`. */
  ptxas: ToolRunSummary & { path: string; inputRoute: InputRoute }
  dumpSass: ToolRunSummary | null
  /** The fatbinary run, for a fat binary; else null. */
  fatbinary: (ToolRunSummary & { path: string }) | null
}

/** What the parallel half of a compile hands to the sequential half. */
export type Assembled =
  | {
      ok: true
      diagnostics: Array<[string, ProgramTool]>
      targets: TargetImage[]
      fatbin: Buffer | null
      fatbinary: ProgramOutput['fatbinary']
      sass: string | null
      dumpSass: ToolRunSummary | null
      ms: number
    }
  | { ok: false; diagnostics: Array<[string, ProgramTool]>; error: unknown }

/**
 * The children, for one compile. `signal` kills them (the caller's abort, or release());
 * `callerSignal` is the caller's own, to tell "cancelled before it started" apart; `find` finds
 * the tools (compileMany's remembers them for its batch); `slots` bounds the children running at
 * once, each holding one while it runs (compileMany's is shared by its batch; a lone compile's
 * lets its targets' ptxas run as many at once as there are cores).
 */
export async function assembleProgram(
  config: ResolvedConfig,
  ptx: string,
  signal: AbortSignal,
  callerSignal: AbortSignal | undefined,
  find: ToolFinder = findTool,
  slots: Semaphore = new Semaphore(Math.max(1, Math.min(config.gpuNames.length, availableParallelism()))),
): Promise<Assembled> {
  const diagnostics: Array<[string, ProgramTool]> = []
  try {
    return await runTools(config, ptx, signal, callerSignal, new OwnClock(slots), diagnostics, find)
  } catch (error) {
    // A temp file that cannot be made (a PTX too big for argv where there is no memfd, the
    // cubin for the dump) fails this compile, status 5 with the cause; it is no caller's mistake.
    return { ok: false, diagnostics, error: error instanceof TempFileError ? compileFailed(error.message, { cause: error }) : error }
  }
}

async function runTools(
  config: ResolvedConfig,
  ptx: string,
  signal: AbortSignal,
  callerSignal: AbortSignal | undefined,
  clock: OwnClock,
  diagnostics: Array<[string, ProgramTool]>,
  find: ToolFinder,
): Promise<Assembled> {
  if (config.hostArch === 'arm64ec') {
    throw compileFailed('host architecture arm64ec: tileharness writes objects for x86_64 and aarch64 only (ELF for linux, COFF for windows)')
  }
  // A cancelled compile touches nothing (docs/toolchain-contract.md, "Cancellation and parallel
  // compiles"), and starts no child once cancelled (the caller's abort, or release(), which the
  // handle reports itself), however long it waited for the child's slot.
  if (callerSignal?.aborted) throw compileFailed('the compile was aborted before ptxas started', { toolStatus: 'aborted' })
  const notCancelled = (tool: string): void => {
    if (signal.aborted) throw compileFailed(`the compile was aborted before ${tool} started`, { toolStatus: 'aborted' })
  }

  // The timeout bounds the compile's own time (OwnClock), not its waits for other compiles' children.
  const timeoutLeft = (): number | undefined =>
    (config.timeout === undefined || config.timeout === 0 ? config.timeout : Math.max(1, Math.ceil(config.timeout - clock.ownMs())))
  const env: Env = config.env ?? process.env

  // ptxas: the one on PATH, else <CUDA_ROOT>/bin/ptxas; if neither, the harness reports ENOENT.
  const ptxasPath = config.ptxas ?? find('ptxas', env)?.path ?? 'ptxas'
  // What both tool runs share: the caller's environment and temp root, the name for temp files.
  const common = {
    signal,
    inputBaseName: config.name,
    ...(config.env === undefined ? {} : { env: config.env }),
    ...(config.tempRoot === undefined ? {} : { tempRoot: config.tempRoot }),
  }
  // One ptxas per target, as many at once as the slots allow; their stderr in target order. Every
  // one started has ended before the compile settles (allSettled): a target cancelled while it
  // waited for its slot no longer settled the compile while the others' ptxas still ran.
  const settled = await Promise.allSettled(config.gpuNames.map((gpuName) => clock.child(() => {
    notCancelled('ptxas')
    return runPtxasAsync(ptx, {
        gpuName,
        optLevel: config.optLevel,
        deviceDebug: config.deviceDebug,
        lineinfo: config.lineinfo,
        relocatable: config.relocatable,
        ptxasOptions: config.ptxasOptions,
        sanitize: config.sanitize,
        ptxas: ptxasPath,
        inputName: config.inputName,
        timeout: timeoutLeft(),
        ...common,
      })
  })))
  const ran = settled.map((s) => (s.status === 'fulfilled' ? s.value : null))
  for (const run of ran) if (run !== null && run.diagnostics !== '') diagnostics.push([run.diagnostics, 'ptxas'])
  const unstarted = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (unstarted !== undefined) {
    // What happened to a ptxas that ran (aborted, say) comes before a target that never started.
    ran.forEach((run, i) => { if (run !== null) targetImage(config, config.gpuNames[i], run, ptxasPath, env) })
    throw unstarted.reason
  }
  const runs = ran as PtxasRun[]
  const targets = runs.map((run, i) => targetImage(config, config.gpuNames[i], run, ptxasPath, env))
  const cubin = targets[0].cubin

  let sass: string | null = null
  let dumpSass: ToolRunSummary | null = null
  if (config.dumpSassCommand !== null) {
    notCancelled('the SASS dump')
    let words: string[]
    try {
      words = dumpCommandWords(config.dumpSassCommand, 'dumpSassCommand')
    } catch (error) {
      throw compileFailed((error as Error).message, { tool: 'dump-sass', cause: error })
    }
    const dump = await clock.child(() => {
      notCancelled('the SASS dump')
      return dumpWordsAsync(withToolkitNvdisasm(words, env, find), cubin, { timeout: timeoutLeft(), ...common })
    })
    if (dump.diagnostics !== '') diagnostics.push([dump.diagnostics, 'dump-sass'])
    if (!dump.ok) {
      const reason = notFoundHere(dump) && words[0] === 'nvdisasm' ? toolNotFoundHint('nvdisasm', env) : dump.message
      throw compileFailed(reason, { diagnostics: dump.diagnostics, tool: 'dump-sass', toolStatus: dump.status })
    }
    sass = dump.sass
    dumpSass = { argv: dump.argv, durationMs: dump.result.durationMs, rusage: dump.result.rusage, diagnostics: dump.diagnostics }
  }
  const fatbinary = config.fatbin ? await wrapTargets(config, ptx, targets, { ...common, timeoutLeft, notCancelled }, env, diagnostics, find, clock) : null
  return { ok: true, diagnostics, targets, fatbin: fatbinary?.fatbin ?? null, fatbinary: fatbinary?.summary ?? null, sass, dumpSass, ms: clock.ownMs() }
}

/**
 * A compile's own time, for its timeout and wallMs: from when its first child got a slot, less
 * the time it then spent with no child running, waiting for a slot other compiles held. Each
 * child runs holding a slot, released as soon as the child's run resolves, so the compile's own
 * JavaScript after it (reading the cubin) overlaps the next compile's children.
 */
class OwnClock {
  readonly #slots: Semaphore
  #started: number | null = null
  #waited = 0
  #running = 0
  #asking = 0
  /** Since when the compile has had no child running and one waiting for a slot. */
  #idleSince: number | null = null

  constructor(slots: Semaphore) {
    this.#slots = slots
  }

  ownMs(): number {
    const now = performance.now()
    if (this.#started === null) return 0
    return now - this.#started - this.#waited - (this.#idleSince === null ? 0 : now - this.#idleSince)
  }

  /** `run` (which starts a child) once a slot is free, holding it until the run settles. */
  async child<T>(run: () => Promise<T>): Promise<T> {
    this.#asking++
    if (this.#running === 0 && this.#idleSince === null) this.#idleSince = performance.now()
    await this.#slots.acquire()
    this.#asking--
    const now = performance.now()
    if (this.#started === null) this.#started = now
    else if (this.#idleSince !== null) this.#waited += now - this.#idleSince
    this.#idleSince = null
    this.#running++
    try {
      return await run()
    } finally {
      this.#running--
      this.#slots.release()
      if (this.#running === 0 && this.#asking > 0) this.#idleSince = performance.now()
    }
  }
}

/** One target's ptxas run as an image, or the compile's failure (naming the target when there are several). */
function targetImage(config: ResolvedConfig, gpuName: string, run: PtxasRun, ptxasPath: string, env: Env): TargetImage {
  const which = config.gpuNames.length > 1 ? `${gpuName}: ` : ''
  if (!run.ok || run.cubin === null) {
    const reason = notFoundHere(run) && config.ptxas === undefined ? toolNotFoundHint('ptxas', env) : run.message
    throw compileFailed(which + reason, { diagnostics: run.diagnostics, tool: 'ptxas', toolStatus: run.status })
  }
  let summary
  try {
    summary = readCubin(run.cubin)
  } catch (error) {
    throw compileFailed(`${which}ptxas wrote a cubin that cannot be read: ${(error as Error).message}`, { tool: 'ptxas', cause: error })
  }
  // Whole-program ptxas keeps kernels and what they call, so a module of device functions alone
  // comes out as a cubin with nothing in it, which no loader or nvlink could use.
  if (!config.relocatable && summary.kernels.length === 0) {
    throw compileFailed('the PTX has no kernel (.entry), so the whole-program cubin ptxas made is empty; ' +
      'compile device functions with relocatable (--relocatable-device-code, -c) and link them with nvlink', { tool: 'ptxas' })
  }
  return {
    gpuName,
    arch: summary.arch,
    sm: summary.sm,
    cubin: run.cubin,
    kernels: summary.kernels,
    ptxas: {
      argv: run.argv,
      path: ptxasPath,
      inputRoute: run.inputRoute,
      durationMs: run.result.durationMs,
      rusage: run.result.rusage,
      diagnostics: run.diagnostics,
    },
  }
}

/**
 * fatbinary over every target's cubin, then the PTX when it is to be embedded (labelled with its
 * own .target, which is what it can be JIT-compiled for).
 */
/**
 * The first SM a module's `.target` directive names, as ptxas reads it: outside comments (a
 * `.target` inside a comment labelled the PTX in the fat binary for an SM it was not written for,
 * which a driver would then JIT it for). String literals are kept whole, so that a `//` or `/*`
 * in a file name starts no comment.
 */
export function ptxTarget(ptx: string): string | undefined {
  // Read as ptxas reads it: token by token, whitespace and comments between any two (`.version 8.6
  // .target sm_90` on one line, `.target /* arch */ sm_90`, the target on the next line), strings
  // stepped over. The scan stops at the first .target: it is near the top of a module, which can be
  // hundreds of MB.
  const token = /\s+|\/\*[\s\S]*?(?:\*\/|$(?![\s\S]))|\/\/[^\n]*|"(?:[^"\\\n]|\\.)*"|[^\s"/,;{}()[\]]+|[\s\S]/y
  let afterTarget = false
  for (let m = token.exec(ptx); m !== null; m = token.exec(ptx)) {
    const t = m[0]
    if (/^\s/.test(t) || t.startsWith('//') || t.startsWith('/*')) continue
    if (afterTarget) return /^sm_[0-9]+[af]?$/.test(t) ? t : undefined
    afterTarget = t === '.target'
  }
  return undefined
}

/**
 * The file name (or anonymous file's label) fatbinary is given for one of the program's images:
 * the program's name, cut so that name and suffix keep within the base-name limit every tool
 * runner checks. A name create accepts (up to that limit itself) had failed every multi-target
 * compile, after ptxas had run. The name is a C identifier, one byte per character.
 */
function imageFileName(name: string, suffix: string): string {
  return name.slice(0, Math.max(1, MAX_BASE_NAME_BYTES - suffix.length)) + suffix
}

async function wrapTargets(
  config: ResolvedConfig,
  ptx: string,
  targets: readonly TargetImage[],
  common: { signal: AbortSignal; timeoutLeft: () => number | undefined; notCancelled: (tool: string) => void; env?: Record<string, string | undefined>; tempRoot?: string },
  env: Env,
  diagnostics: Array<[string, ProgramTool]>,
  find: ToolFinder,
  clock: OwnClock,
): Promise<{ fatbin: Buffer; summary: NonNullable<ProgramOutput['fatbinary']> }> {
  common.notCancelled('fatbinary')
  const images: FatbinaryInput[] = targets.map((t) => ({ kind: 'elf', gpuName: t.gpuName, fileName: imageFileName(config.name, `.${t.gpuName}.cubin`), data: t.cubin }))
  if (config.embedPtx) {
    images.push({ kind: 'ptx', gpuName: ptxTarget(ptx) ?? config.gpuName, fileName: imageFileName(config.name, '.ptx'), data: ptx })
  }
  const fatbinaryPath = find('fatbinary', env)?.path ?? 'fatbinary'
  const run: FatbinaryRun = await clock.child(async () => {
    common.notCancelled('fatbinary')
    const timeout = common.timeoutLeft()
    try {
      return await runFatbinaryAsync(images, {
        fatbinary: fatbinaryPath,
        relocatable: config.relocatable,
        signal: common.signal,
        ...(timeout === undefined ? {} : { timeout }),
        ...(common.env === undefined ? {} : { env: common.env }),
        ...(common.tempRoot === undefined ? {} : { tempRoot: common.tempRoot }),
      })
    } catch (error) {
      throw compileFailed(`fatbinary cannot be run: ${(error as Error).message}`, { tool: 'fatbinary', cause: error })
    }
  })
  if (run.diagnostics !== '') diagnostics.push([run.diagnostics, 'fatbinary'])
  if (!run.ok || run.fatbin === null) {
    const reason = notFoundHere(run) ? toolNotFoundHint('fatbinary', env) : run.message
    throw compileFailed(reason, { diagnostics: run.diagnostics, tool: 'fatbinary', toolStatus: run.status })
  }
  return {
    fatbin: run.fatbin,
    summary: { argv: run.argv, path: fatbinaryPath, durationMs: run.result.durationMs, rusage: run.result.rusage, diagnostics: run.diagnostics },
  }
}

/** The tools' stderr to onDiagnostic, in the order they ran, whether the compile succeeded or not. */
export function deliverDiagnostics(config: ResolvedConfig, assembled: Assembled): void {
  if (config.onDiagnostic === undefined) return
  for (const [text, tool] of assembled.diagnostics) config.onDiagnostic(text, tool)
}

/**
 * The output of a successful assemble, around its host object; throws the failure of one that
 * failed. `finalizeStarted` is when the sequential half began, counted in the program's wallMs.
 */
export function packageOutput(config: ResolvedConfig, assembled: Assembled, finalizeStarted: number): ProgramOutput {
  if (!assembled.ok) throw assembled.error
  let object: Buffer
  try {
    // ELF for linux, COFF for windows: the same sections and symbols (lib/elf/coff.ts).
    const packageObject = config.hostOs === 'windows' ? packageCoffObject : packageHostObject
    // Every field the input's own, undefined where there is none: a field left out is one a
    // polluted Object.prototype could fill (its `sass` had been packaged into every object).
    object = packageObject({
      cubin: assembled.fatbin === null ? assembled.targets[0].cubin : undefined,
      fatbin: assembled.fatbin ?? undefined,
      name: config.name,
      hostArch: config.hostArch as 'x86_64' | 'aarch64',
      sass: assembled.sass ?? undefined,
    })
  } catch (error) {
    throw compileFailed(`the host object cannot be written: ${(error as Error).message}`, { cause: error })
  }
  const first = assembled.targets[0]
  return {
    object,
    cubin: first.cubin,
    fatbin: assembled.fatbin,
    targets: assembled.targets,
    sass: assembled.sass,
    name: config.name,
    gpuName: config.gpuName,
    sm: first.sm,
    arch: first.arch,
    kernels: first.kernels,
    wallMs: assembled.ms + (performance.now() - finalizeStarted),
    ptxas: first.ptxas,
    dumpSass: assembled.dumpSass,
    fatbinary: assembled.fatbinary,
  }
}

/**
 * The dump command's words, except that a bare `nvdisasm` missing from PATH runs
 * <CUDA_ROOT>/bin/nvdisasm: tileiras keeps the toolkit root in the handle for exactly this.
 */
function withToolkitNvdisasm(words: string[], env: Env, find: ToolFinder): string[] {
  if (words[0] !== 'nvdisasm') return words
  const location = find('nvdisasm', env)
  return location === null || location.source === 'PATH' ? words : [location.path, ...words.slice(1)]
}

/**
 * Whether the tool itself was not found (its exec failed, ENOENT): only then is the way to make it
 * findable the fix. A tool that was found and exited 127 (a wrapper whose own program is missing)
 * is reported in the contract's words, its stderr beside them.
 */
function notFoundHere(run: { status: string; result: ChildResult }): boolean {
  return run.status === 'not-found' && run.result.spawnError?.stage === 'exec'
}

/** How to make `tool` findable: the fix, not just the symptom (`diagnostic`, the errno's text). */
export function toolNotFoundHint(tool: CudaTool, env: Env = process.env, diagnostic: string = DIAGNOSTIC.notFound): string {
  // The environment's own variables, as findTool reads them: an inherited CUDA_ROOT was not searched.
  // Each read once: a getter may answer differently each time.
  const set = CUDA_ROOT_VARIABLES.map((name) => [name, own(env, name)] as const).find(([, value]) => value !== undefined && value !== '')
  const looked = set === undefined ? 'on PATH' : `on PATH or in $${set[0]}/bin (${set[0]}=${set[1]})`
  return `${tool} was not found ${looked} (${diagnostic}); put a CUDA toolkit's bin directory on PATH ` +
    '(export PATH=/usr/local/cuda/bin:$PATH) or point CUDA_ROOT at the toolkit (export CUDA_ROOT=/usr/local/cuda)'
}
