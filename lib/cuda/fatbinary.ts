// The fatbinary adapter: several cubins (and the PTX) into one fat binary, through the harness.
// Each image goes to fatbinary as an anonymous file (memfd) the child inherits as fd 3, 4, ...
// and reads as /dev/fd/3, /dev/fd/4, ..., as ptxas reads its PTX: nothing is on disk, and no
// path of the temp root reaches fatbinary's argv, which splits --image3 at commas. Where
// memfd_create is not available, each image is a private temp file of its own (temp-file.ts)
// instead. Either way the images exist for as long as the child runs and no longer; the fat
// binary comes back on the stdout pipe (fatbinary-argv.ts). Its exit statuses read as every
// tool's do (tool-status.ts).

import { spawnChild } from '../spawn/index.js'
import { MAX_EXTRA_FD } from '../spawn/normalize.js'
import type { ChildResult, ChildSpec } from '../spawn/types.js'
import { readFatbin } from '../elf/fatbin.js'
import { buildFatbinaryArgv, type FatbinaryImage } from './fatbinary-argv.js'
import { element, invalidType, invalidValue, isBytes, optionKeys, ownFields, ownOptions, requireObject } from '../errors.js'
import { checkBaseName, withAnonymousFiles, withPrivateTempFile } from './temp-file.js'
import { decodeToolResult, type ToolStatus } from './tool-status.js'

/** Seconds for a few megabytes of copying; anything longer is stuck. */
export const DEFAULT_FATBINARY_TIMEOUT_MS = 2 * 60 * 1000

export interface FatbinaryInput {
  kind: FatbinaryImage['kind']
  gpuName: string
  /** The temp file's name ('vadd.sm_90.cubin'), and the anonymous file's label. */
  fileName: string
  data: Uint8Array | string
}

export interface RunFatbinaryOptions {
  /** The program to start; default 'fatbinary' on the child's PATH. */
  fatbinary?: string
  env?: Record<string, string | undefined>
  timeout?: number
  signal?: AbortSignal
  /** Where the images' temp files go on the 'file' route; default the system's temp directory. */
  tempRoot?: string
  /** The cubins are relocatable (ptxas -c): fatbinary --device-c. */
  relocatable?: boolean
  /**
   * How fatbinary reads the images. 'memfd' (the default): anonymous files it inherits, falling
   * back to 'file' when memfd_create fails. 'file': private temp files under `tempRoot`, whose
   * paths must then have no comma. The result says which was taken.
   */
  inputRoute?: 'memfd' | 'file'
}

const RUN_FATBINARY_KEYS = optionKeys<RunFatbinaryOptions>({
  fatbinary: true, env: true, timeout: true, signal: true, tempRoot: true, relocatable: true, inputRoute: true,
})

/** The images' route, as ptxas has its input's (ptxas.ts). */
export type FatbinaryInputRoute = 'memfd' | 'file'

export type FatbinaryStatus = ToolStatus | 'no-fatbin'

export interface FatbinaryRun {
  status: FatbinaryStatus
  ok: boolean
  /** The fat binary, only when fatbinary exited 0 and wrote a readable one. */
  fatbin: Buffer | null
  /** fatbinary's stderr, verbatim. */
  diagnostics: string
  message: string
  argv: string[]
  /** How fatbinary read the images. */
  inputRoute: FatbinaryInputRoute
  result: ChildResult
}

/** The child fd the first image is on, on the memfd route; the next is one above, and so on. */
const FIRST_IMAGE_FD = 3

/** Run fatbinary on `images`, in their order. Throws only for bad input (TypeError). */
export async function runFatbinaryAsync(givenImages: readonly FatbinaryInput[], given: RunFatbinaryOptions = {}): Promise<FatbinaryRun> {
  // The options and each image by their own fields, read once, and the images by their own
  // elements: a fatbinary, env or inputRoute inherited from a polluted Object.prototype is as if
  // absent, and a hole in the list is refused, not an image from Array.prototype. A field that is
  // no option is refused.
  const options = ownOptions('options', given, RUN_FATBINARY_KEYS)
  if (!Array.isArray(givenImages)) throw invalidType('images', 'an array of { kind, gpuName, fileName, data }', givenImages)
  const images: FatbinaryInput[] = []
  // Element by element, each checked as it is read (a sparse array is refused at its first hole).
  for (let i = 0; i < givenImages.length; i++) {
    const entry = element(givenImages, i)
    requireObject(`images[${i}]`, entry)
    const image = ownFields(entry as FatbinaryInput)
    // Each image's file is made in a private directory of its own: a plain name stays inside it.
    checkBaseName(`images[${i}].fileName`, image.fileName)
    if (typeof image.data !== 'string' && !isBytes(image.data)) throw invalidType(`images[${i}].data`, 'a Uint8Array or string', image.data)
    images.push(image)
  }
  const route = options.inputRoute ?? 'memfd'
  if (route !== 'memfd' && route !== 'file') throw invalidValue('options.inputRoute', "must be 'memfd' or 'file'", route)
  // kind and gpuName, before any file is made (the temp files' own paths are checked once they exist).
  const argvOptions = { relocatable: options.relocatable }
  buildFatbinaryArgv(images.map((image, i) => ({ kind: image.kind, gpuName: image.gpuName, file: `/dev/fd/${FIRST_IMAGE_FD + i}` })), argvOptions)
  const viaFiles = () => withImageFiles(images, options.tempRoot, [], (files) => run('file', files, {}))
  const run = async (inputRoute: FatbinaryInputRoute, files: string[], fds: Record<number, number>): Promise<FatbinaryRun> => {
    const argv = buildFatbinaryArgv(images.map((image, i) => ({ kind: image.kind, gpuName: image.gpuName, file: files[i] })), argvOptions)
    const spec: ChildSpec = {
      file: options.fatbinary ?? 'fatbinary',
      argv0: argv[0],
      args: argv.slice(1),
      stdin: 'closed',
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: options.timeout ?? DEFAULT_FATBINARY_TIMEOUT_MS,
      launcher: 'posix_spawn',
      measure: true,
      fds,
    }
    if (options.env !== undefined) spec.env = options.env
    if (options.signal !== undefined) spec.signal = options.signal
    return interpretFatbinaryResult(await spawnChild(spec), argv, spec, images, inputRoute)
  }
  // One child fd per image, from 3 up to the highest a child fd may be: more images than that
  // go by the file route, as where memfd_create fails (the memfds made so far closed first).
  if (route === 'file' || FIRST_IMAGE_FD + images.length - 1 > MAX_EXTRA_FD) return viaFiles()
  return withAnonymousFiles(images.map((image) => ({ name: image.fileName, data: image.data })), (memfds) => {
    if (memfds === null) return viaFiles()
    return run('memfd', memfds.map((_, i) => `/dev/fd/${FIRST_IMAGE_FD + i}`), Object.fromEntries(memfds.map((fd, i) => [FIRST_IMAGE_FD + i, fd])))
  })
}

/** Each image in a private temp file, made one after the other, removed when `use` has settled. */
function withImageFiles<T>(images: readonly FatbinaryInput[], tempRoot: string | undefined, files: string[], use: (files: string[]) => Promise<T>): Promise<T> {
  if (files.length === images.length) return use(files)
  const image = images[files.length]
  return withPrivateTempFile({ name: image.fileName, data: image.data, tempRoot }, (temp) => withImageFiles(images, tempRoot, [...files, temp!.path], use))
}

/**
 * A fat binary is taken only when it is readable, is the whole output (its header's size), and
 * holds exactly the images given (each kind and target once; fatbinary keeps their order, but the
 * order is not what is checked).
 */
function interpretFatbinaryResult(result: ChildResult, argv: string[], spec: ChildSpec, images: readonly FatbinaryInput[], inputRoute: FatbinaryInputRoute): FatbinaryRun {
  const verdict = decodeToolResult('fatbinary', result, spec)
  let status: FatbinaryStatus = verdict.status
  let message = verdict.message
  let fatbin: Buffer | null = null
  if (status === 'ok') {
    const wrong = (why: string): void => {
      status = 'no-fatbin'
      message = `fatbinary exited with status 0 but ${why}`
    }
    const out = result.stdout
    try {
      const held = readFatbin(out).map((e) => `${e.kind} ${e.arch}`)
      const given = images.map((image) => `${image.kind} ${image.gpuName}`)
      const size = out.readUInt16LE(6) + Number(out.readBigUInt64LE(8))
      if (size !== out.length) wrong(`wrote ${out.length} bytes, of which its fat binary is ${size}`)
      else if ([...held].sort().join() !== [...given].sort().join()) wrong(`its fat binary holds [${held.join(', ')}], not the images given [${given.join(', ')}]`)
      else fatbin = out
    } catch (error) {
      wrong(`wrote no readable fat binary: ${(error as Error).message}`)
    }
  }
  return { status, ok: status === 'ok', fatbin, diagnostics: result.stderr.toString('utf8'), message, argv, inputRoute, result }
}
