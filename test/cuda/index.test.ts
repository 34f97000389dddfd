// tileharness/cuda is lib/cuda/index.ts: everything the layer offers is exported from there.
import t from 'tap'
import { readFileSync } from 'node:fs'
import * as cuda from '../../lib/cuda/index.js'

t.test('the subpath export maps to lib/cuda/index', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  t.same(pkg.exports['./cuda'], { types: './dist/cuda/index.d.ts', default: './dist/cuda/index.js' })
})

t.test('every entry point of the issue is exported', async (t) => {
  const functions = [
    'buildPtxasArgv', 'buildBasePtxOptions', 'knobsFileFromEnv', 'ptxFitsInArgv', 'runPtxas', 'runPtxasAsync',
    'interpretPtxasResult', 'ptxasChildSpec', 'probePtxas', 'clearPtxasProbeCache', 'parsePtxasHelp',
    'parsePtxasVersion', 'parsePtxasVersionList', 'splitCommand', 'quoteForSplit', 'dumpSass', 'dumpSassAsync',
    'buildNvdisasmArgv', 'interpretDumpResult', 'parseKnobFile', 'validateKnobFile', 'resolveCudaRoot', 'findTool',
    'searchPath', 'cubinExtent', 'splitMergedOutput', 'decodeToolResult', 'invalidType', 'invalidValue', 'outOfRange',
    'renamePtxasInput',
  ]
  for (const name of functions) t.type((cuda as Record<string, unknown>)[name], 'function', name)
  t.type(cuda.KnobFileError, 'function', 'KnobFileError')
  t.type(cuda.PtxasProbeError, 'function', 'PtxasProbeError')
  t.type(cuda.TempFileError, 'function', 'TempFileError')
  t.equal(cuda.MAX_ARG_STRLEN, 131072)
  t.equal(cuda.DEFAULT_DUMP_SASS_COMMAND, 'nvdisasm -c')
  t.equal(cuda.PTXAS_OUTPUT, '/dev/stdout')
})
