// Toolkit discovery (docs/toolchain-contract.md, "Toolkit discovery and the environment"):
// CUDA_ROOT, CUDA_HOME and CUDA_PATH name the toolkit, and PATH is how ptxas and nvdisasm are found
// by basename. The child environment itself is never edited here: it is inherited unchanged unless
// a caller passes one.

import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, dirname, basename, isAbsolute, join, resolve } from 'node:path'
import { invalidType, invalidValue, own, requireObject } from '../errors.js'

export type Env = Readonly<Record<string, string | undefined>>

/** The toolkit variables in the order they are consulted. */
export const CUDA_ROOT_VARIABLES = ['CUDA_ROOT', 'CUDA_HOME', 'CUDA_PATH'] as const
export type CudaRootVariable = (typeof CUDA_ROOT_VARIABLES)[number]

export type CudaTool = 'ptxas' | 'nvdisasm' | 'fatbinary'
const CUDA_TOOLS: readonly string[] = ['ptxas', 'nvdisasm', 'fatbinary']

export interface CudaRoot {
  /** The toolkit directory (the one holding bin/). */
  root: string
  /** Where it came from: a variable, or 'PATH' when derived from the ptxas found on PATH. */
  source: CudaRootVariable | 'PATH'
  /** For source 'PATH': the ptxas that was found. Symlinks and wrapper scripts are not followed. */
  ptxas?: string
}

export interface ToolLocation {
  path: string
  /** 'PATH' when found by a PATH search, else the variable whose <root>/bin held it. */
  source: 'PATH' | CudaRootVariable
}

/**
 * The CUDA toolkit root: CUDA_ROOT, then CUDA_HOME, then CUDA_PATH (the first one set and
 * non-empty wins, as given, without checking that it exists), then the toolkit that holds the
 * `ptxas` found on PATH: the parent of its directory when that directory is named `bin`, else
 * the directory itself. That last step reports what it found: a /usr/local/bin/ptxas wrapper
 * script gives /usr/local, because wrappers and symlinks are not followed.
 */
export function resolveCudaRoot(env: Env = process.env): CudaRoot | null {
  const vars = readEnv(env)
  const fromVariable = rootFromVariables(vars)
  if (fromVariable !== null) return fromVariable
  const ptxas = searchIn('ptxas', vars.PATH)
  if (ptxas === null) return null
  const dir = dirname(ptxas)
  return { root: basename(dir) === 'bin' ? dirname(dir) : dir, source: 'PATH', ptxas }
}

/** `name` on PATH first, then in <root>/bin for the first toolkit variable that is set. */
export function findTool(name: CudaTool, env: Env = process.env): ToolLocation | null {
  if (typeof name !== 'string') throw invalidType('name', 'a string', name)
  if (!CUDA_TOOLS.includes(name)) {
    throw invalidValue('name', `must be one of ${CUDA_TOOLS.join(', ')}`, name)
  }
  const vars = readEnv(env)
  const onPath = searchIn(name, vars.PATH)
  if (onPath !== null) return { path: onPath, source: 'PATH' }
  // The PATH-derived root is not consulted here: it can only point back at PATH.
  const root = rootFromVariables(vars)
  if (root === null) return null
  const candidate = join(root.root, 'bin', name)
  return isExecutableFile(candidate) ? { path: resolve(candidate), source: root.source as CudaRootVariable } : null
}

/** How the compile pipeline finds a tool: findTool, or a batch's memoizedFindTool. */
export type ToolFinder = (name: CudaTool, env: Env) => ToolLocation | null

/**
 * A findTool that searches once for each tool, PATH, toolkit variables and working directory,
 * and then answers from memory: one batch of compiles (compileMany) searches PATH once, not once
 * per program. It lives as long as the batch; a tool removed meanwhile fails that compile as a
 * missing tool does (ENOENT at exec).
 */
export function memoizedFindTool(find: ToolFinder = findTool): ToolFinder {
  const found = new Map<string, ToolLocation | null>()
  return (name, env) => {
    const vars = readEnv(env)
    const key = JSON.stringify([name, vars.PATH, process.cwd(), ...CUDA_ROOT_VARIABLES.map((v) => vars[v])])
    let location = found.get(key)
    if (location === undefined) found.set(key, (location = find(name, vars)))
    return location
  }
}

/**
 * execvp's search: each PATH entry in order, an empty entry meaning the current directory;
 * the first regular file we may execute wins. Returns an absolute path. A name with a '/' is
 * not searched, as execvp does.
 */
export function searchPath(name: string, env: Env = process.env): string | null {
  if (name.length === 0) return null
  if (name.includes('/')) return isExecutableFile(name) ? resolve(name) : null
  requireObject('env', env)
  return searchIn(name, envString(env, 'PATH'))
}

/** searchPath's search of a name without '/', in a PATH value the caller has checked. */
function searchIn(name: string, pathVar: string | undefined): string | null {
  if (pathVar === undefined) return null
  for (const entry of pathVar.split(delimiter)) {
    const candidate = join(entry === '' ? '.' : entry, name)
    if (isExecutableFile(candidate)) return isAbsolute(candidate) ? candidate : resolve(candidate)
  }
  return null
}

function rootFromVariables(vars: ToolkitVariables): CudaRoot | null {
  for (const variable of CUDA_ROOT_VARIABLES) {
    const value = vars[variable]
    if (value !== undefined && value !== '') return { root: value, source: variable }
  }
  return null
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

type ToolkitVariables = Partial<Record<'PATH' | CudaRootVariable, string>>

/**
 * The variables read here (PATH and the toolkit roots), each read once and checked to be a
 * string where set: what is searched is what was checked.
 */
function readEnv(env: unknown): ToolkitVariables {
  requireObject('env', env)
  const vars: ToolkitVariables = {}
  for (const variable of ['PATH', ...CUDA_ROOT_VARIABLES] as const) vars[variable] = envString(env as Env, variable)
  return vars
}

/** The environment's own variable: one inherited from a polluted Object.prototype is not set. */
function envString(env: Env, variable: string): string | undefined {
  const value = own(env, variable)
  if (value !== undefined && typeof value !== 'string') throw invalidType(`env.${variable}`, 'a string', value)
  return value
}
