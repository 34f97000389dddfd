import t from 'tap'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { resolveCudaRoot, findTool, searchPath, toolNotFoundHint } from '../../lib/cuda/index.js'
import { memoizedFindTool } from '../../lib/cuda/toolkit.js'
import { withPollutedPrototype } from '../helpers.js'
import { fakeTool, scratchDir, PTXAS, NO_PTXAS } from '../fixtures/cuda/helpers.js'

t.test('resolveCudaRoot: CUDA_ROOT, then CUDA_HOME, then CUDA_PATH, then ptxas on PATH', async (t) => {
  const dir = scratchDir(t)
  const toolkitBin = join(dir, 'cuda-13.0', 'bin')
  mkdirSync(toolkitBin, { recursive: true })
  const ptxasInBin = fakeTool(toolkitBin, 'ptxas', 'exit 0')
  const flat = join(dir, 'flat')
  mkdirSync(flat)
  const ptxasFlat = fakeTool(flat, 'ptxas', 'exit 0')
  const empty = join(dir, 'empty')
  mkdirSync(empty)

  const rows: Array<[string, Record<string, string>, unknown]> = [
    ['CUDA_ROOT wins', { CUDA_ROOT: '/r', CUDA_HOME: '/h', CUDA_PATH: '/p', PATH: toolkitBin }, { root: '/r', source: 'CUDA_ROOT' }],
    ['then CUDA_HOME', { CUDA_HOME: '/h', CUDA_PATH: '/p', PATH: toolkitBin }, { root: '/h', source: 'CUDA_HOME' }],
    ['then CUDA_PATH', { CUDA_PATH: '/p', PATH: toolkitBin }, { root: '/p', source: 'CUDA_PATH' }],
    ['an empty variable is skipped', { CUDA_ROOT: '', CUDA_HOME: '/h' }, { root: '/h', source: 'CUDA_HOME' }],
    ['a variable is taken as given, existing or not', { CUDA_ROOT: '/does/not/exist' }, { root: '/does/not/exist', source: 'CUDA_ROOT' }],
    ['then ptxas on PATH: parent of its bin/', { PATH: `${empty}:${toolkitBin}` }, { root: join(dir, 'cuda-13.0'), source: 'PATH', ptxas: ptxasInBin }],
    ['ptxas outside a bin/: its own directory', { PATH: flat }, { root: flat, source: 'PATH', ptxas: ptxasFlat }],
    ['nothing at all', { PATH: empty }, null],
    ['no PATH at all', {}, null],
  ]
  for (const [name, env, expected] of rows) t.same(resolveCudaRoot(env), expected, name)
})

t.test('resolveCudaRoot on this machine says what it found and how', { skip: PTXAS === null ? NO_PTXAS : false }, async (t) => {
  const found = resolveCudaRoot({ PATH: process.env.PATH })
  t.equal(found?.source, 'PATH')
  t.equal(found?.ptxas, PTXAS, 'the ptxas found on PATH, wrapper scripts not followed')
  t.comment(`ptxas on PATH: ${found?.ptxas} -> root ${found?.root}`)
})

t.test('findTool: PATH first, then <root>/bin', async (t) => {
  const dir = scratchDir(t)
  const pathDir = join(dir, 'path')
  const rootBin = join(dir, 'root', 'bin')
  const homeBin = join(dir, 'home', 'bin')
  for (const d of [pathDir, rootBin, homeBin]) mkdirSync(d, { recursive: true })
  const onPath = fakeTool(pathDir, 'ptxas', 'exit 0')
  const inRoot = fakeTool(rootBin, 'nvdisasm', 'exit 0')
  const inHome = fakeTool(homeBin, 'nvdisasm', 'exit 0')
  // Not executable: never "found".
  writeFileSync(join(pathDir, 'nvdisasm'), '#!/bin/sh\n', { mode: 0o644 })
  mkdirSync(join(dir, 'dirtool', 'ptxas'), { recursive: true })

  const root = join(dir, 'root')
  const rows: Array<[string, 'ptxas' | 'nvdisasm', Record<string, string>, unknown]> = [
    ['found on PATH', 'ptxas', { PATH: pathDir, CUDA_ROOT: root }, { path: onPath, source: 'PATH' }],
    ['not executable on PATH: falls back to <root>/bin', 'nvdisasm', { PATH: pathDir, CUDA_ROOT: root }, { path: inRoot, source: 'CUDA_ROOT' }],
    ['root from CUDA_HOME', 'nvdisasm', { PATH: '', CUDA_HOME: join(dir, 'home') }, { path: inHome, source: 'CUDA_HOME' }],
    ['CUDA_ROOT is the root even when CUDA_HOME has the tool', 'nvdisasm', { CUDA_ROOT: join(dir, 'nope'), CUDA_HOME: join(dir, 'home') }, null],
    ['a directory named like the tool is not the tool', 'ptxas', { PATH: join(dir, 'dirtool') }, null],
    ['nowhere', 'ptxas', { PATH: rootBin }, null],
  ]
  for (const [name, tool, env, expected] of rows) t.same(findTool(tool, env), expected, name)

  t.throws(() => findTool('nvcc' as 'ptxas', {}), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', field: 'name' })
  t.throws(() => findTool('ptxas', null as unknown as Record<string, string>), { code: 'ERR_INVALID_ARG_TYPE', field: 'env' })
  // The variables read here, when set, are strings ('pathVar.split is not a function', or Node's
  // own 'The "path" argument must be of type string', and resolveCudaRoot gave { root: 42 }).
  const numbers = (variable: string) => ({ PATH: '/usr/bin', [variable]: 42 }) as unknown as Record<string, string>
  for (const variable of ['PATH', 'CUDA_ROOT', 'CUDA_HOME', 'CUDA_PATH']) {
    t.throws(() => findTool('ptxas', numbers(variable)), { code: 'ERR_INVALID_ARG_TYPE', field: `env.${variable}` }, `findTool, ${variable}: 42`)
    t.throws(() => resolveCudaRoot(numbers(variable)), { code: 'ERR_INVALID_ARG_TYPE', field: `env.${variable}` }, `resolveCudaRoot, ${variable}: 42`)
  }
  t.throws(() => searchPath('ptxas', numbers('PATH')), { code: 'ERR_INVALID_ARG_TYPE', field: 'env.PATH' }, 'searchPath, PATH: 42')

  // Each variable is read once, so what is searched is what was checked: an env whose getters
  // answer a string and then 42 (PATH had been read twice per lookup, three times in a batch's).
  const fickle = (variables: Record<string, string | undefined>) => {
    const reads = new Map<string, number>()
    const env = new Proxy(variables as Record<string, string>, {
      get(target, key: string) {
        reads.set(key, (reads.get(key) ?? 0) + 1)
        return reads.get(key)! > 1 ? (42 as unknown as string) : target[key]
      },
    })
    return { env, reads }
  }
  const lookups = [
    ['findTool', (env: Record<string, string>) => findTool('nvdisasm', env)],
    ['resolveCudaRoot', (env: Record<string, string>) => resolveCudaRoot(env)],
    ['a batch\'s findTool', (env: Record<string, string>) => memoizedFindTool()('nvdisasm', env)],
  ] as const
  for (const [name, look] of lookups) {
    const { env, reads } = fickle({ PATH: process.env.PATH })
    t.doesNotThrow(() => look(env), name)
    t.same([...reads].filter(([, n]) => n > 1), [], `${name} reads each variable once`)
  }
})

t.test('searchPath follows execvp: empty entries are the current directory', async (t) => {
  const dir = scratchDir(t)
  const tool = fakeTool(dir, 'mytool', 'exit 0')
  const cwd = process.cwd()
  process.chdir(dir)
  try {
    t.equal(searchPath('mytool', { PATH: ':/nonexistent' }), tool, 'leading empty entry')
    t.equal(searchPath('mytool', { PATH: '/nonexistent:' }), tool, 'trailing empty entry')
    t.equal(searchPath('mytool', { PATH: '/nonexistent' }), null)
  } finally {
    process.chdir(cwd)
  }
  t.equal(searchPath(tool, { PATH: '' }), tool, 'a path with a / is not searched')
  t.equal(searchPath('', { PATH: dir }), null)
})

t.test('the child environment is inherited unchanged: discovery never writes to env', async (t) => {
  const env = Object.freeze({ PATH: '/nonexistent', CUDA_HOME: '/h' })
  t.doesNotThrow(() => resolveCudaRoot(env))
  t.doesNotThrow(() => findTool('ptxas', env))
  t.same(env, { PATH: '/nonexistent', CUDA_HOME: '/h' })
})

t.test('memoizedFindTool: one search per tool, PATH, toolkit variables and directory; then memory', async (t) => {
  const dir = scratchDir(t)
  const a = join(dir, 'a')
  const b = join(dir, 'b')
  for (const d of [a, b]) mkdirSync(d)
  const inA = fakeTool(a, 'ptxas', 'exit 0')
  const inB = fakeTool(b, 'ptxas', 'exit 0')
  const searched: string[] = []
  const find = memoizedFindTool((name, env) => {
    searched.push(`${name} ${env.PATH} ${env.CUDA_ROOT ?? '-'}`)
    return findTool(name, env)
  })
  t.same(find('ptxas', { PATH: a }), { path: inA, source: 'PATH' })
  t.same(find('ptxas', { PATH: a, UNRELATED: 'x' }), { path: inA, source: 'PATH' }, 'other variables do not matter')
  rmSync(inA)
  t.same(find('ptxas', { PATH: a }), { path: inA, source: 'PATH' }, 'answered from memory: the batch keeps its answer')
  t.same(find('ptxas', { PATH: b }), { path: inB, source: 'PATH' }, 'another PATH is searched')
  t.equal(find('nvdisasm', { PATH: b }), null, 'another tool is searched; not found is remembered too')
  t.equal(find('nvdisasm', { PATH: b }), null)
  t.same(find('ptxas', { PATH: a, CUDA_ROOT: b }), null, 'a toolkit variable is part of the question')
  t.same(searched, ['ptxas ' + a + ' -', 'ptxas ' + b + ' -', 'nvdisasm ' + b + ' -', 'ptxas ' + a + ' ' + b])
  t.same(memoizedFindTool()('ptxas', { PATH: b }), { path: inB, source: 'PATH' }, 'findTool by default')
  t.throws(() => find('ptxas', null as unknown as Record<string, string>), { code: 'ERR_INVALID_ARG_TYPE', field: 'env' })
})

t.test('an environment is read by its own variables: none inherited from a polluted Object.prototype', async (t) => {
  const dir = scratchDir(t)
  // A toolkit with every tool, and a PATH with them: found wherever an inherited variable was read.
  const bin = join(dir, 'cuda', 'bin')
  mkdirSync(bin, { recursive: true })
  for (const tool of ['ptxas', 'nvdisasm', 'fatbinary']) fakeTool(bin, tool, 'exit 0')
  const empty = join(dir, 'empty')
  mkdirSync(empty)
  const env = { PATH: empty }
  for (const variable of ['CUDA_ROOT', 'CUDA_HOME', 'CUDA_PATH']) {
    const found = await withPollutedPrototype({ [variable]: join(dir, 'cuda') }, () => [
      resolveCudaRoot(env), findTool('nvdisasm', env), memoizedFindTool()('nvdisasm', env), toolNotFoundHint('nvdisasm', env, 'not found'),
    ]).catch((error: unknown) => error)
    t.same(found, [null, null, null, toolNotFoundHint('nvdisasm', env, 'not found')], `${variable}: no toolkit, and the hint says PATH only`)
  }
  const onPath = await withPollutedPrototype({ PATH: bin }, () => [
    resolveCudaRoot({}), findTool('ptxas', {}), searchPath('ptxas', {}),
  ]).catch((error: unknown) => error)
  t.same(onPath, [null, null, null], 'PATH: nothing searched')
})
