// tileharness/cuda: the ptxas and nvdisasm adapters, knob files and toolkit discovery, built on
// the subprocess harness in ../spawn, and the Program handle over them (./program). What they
// implement, and what ptxas 13.0 measurably does, is docs/toolchain-contract.md.

export {
  invalidType,
  invalidValue,
  outOfRange,
  // The names these types had when the CUDA layer had its own errors module.
  type ArgumentErrorCode as CudaErrorCode,
  type ArgumentRangeError as CudaRangeError,
  type ArgumentTypeError as CudaTypeError,
} from '../errors.js'
// The word splitter lives at the package root now (../split-command.ts); still exported here.
export { splitCommand, quoteForSplit } from '../split-command.js'
export {
  resolveCudaRoot,
  findTool,
  searchPath,
  CUDA_ROOT_VARIABLES,
  type CudaRoot,
  type CudaRootVariable,
  type CudaTool,
  type Env,
  type ToolLocation,
} from './toolkit.js'
export {
  parseKnobFile,
  validateKnobFile,
  KnobFileError,
  KNOB_MESSAGES,
  KNOB_TYPES,
  KNOBS_HEADER,
  type KnobCommand,
  type KnobErrorCode,
  type KnobFile,
  type KnobType,
  type KnobValue,
  type ParseKnobOptions,
} from './knobs.js'
export {
  buildPtxasArgv,
  buildBasePtxOptions,
  knobsFileFromEnv,
  ptxFitsInArgv,
  MAX_ARG_STRLEN,
  DEFAULT_OPT_LEVEL,
  type PtxasArgvOptions,
} from './ptxas-argv.js'
export { TempFileError } from './temp-file.js'
export { renamePtxasInput, PTXAS_ARGV_INPUT } from './ptxas-input-name.js'
export { cubinExtent, splitMergedOutput, type SplitOutput } from './merged-output.js'
export { decodeToolResult, type ToolStatus, type ToolVerdict } from './tool-status.js'
export {
  runPtxas,
  runPtxasAsync,
  interpretPtxasResult,
  ptxasChildSpec,
  PTXAS_OUTPUT,
  DEFAULT_PTXAS_TIMEOUT_MS,
  type InputRoute,
  type PtxasRun,
  type PtxasStatus,
  type RunPtxasOptions,
} from './ptxas.js'
export {
  probePtxas,
  probePtxasAsync,
  clearPtxasProbeCache,
  parsePtxasGpuNames,
  parsePtxasHelp,
  parsePtxasVersion,
  parsePtxasVersionList,
  PtxasProbeError,
  type ProbePtxasOptions,
  type PtxasOption,
  type PtxasProbe,
} from './probe.js'
export {
  dumpSass,
  dumpSassAsync,
  buildNvdisasmArgv,
  interpretDumpResult,
  DEFAULT_DUMP_SASS_COMMAND,
  DEFAULT_DUMP_SASS_TIMEOUT_MS,
  EMPTY_DUMP_SASS_COMMAND,
  NVDISASM_FLAG_BLOCK,
  NVDISASM_SANITIZE_TAIL,
  type DumpSassOptions,
  type NvdisasmArgvOptions,
  type SassDump,
} from './nvdisasm.js'
export {
  PROGRAM_ERRORS,
  LOOKS_LIKE_TILE_IR,
  LOOKS_LIKE_MLIR,
  ProgramError,
  type ProgramErrorCode,
  type ProgramErrorDetails,
  type ProgramErrorStatus,
  type ProgramStatus,
  type ProgramTool,
} from './program/errors.js'
export { probePtxText, TILE_IR_MAGIC, MLIR_MAGIC } from './program/input-probe.js'
export {
  checkGpuTarget,
  checkGpuTargets,
  variantTargets,
  defaultHostArch,
  SUPPORTED_GPU_TARGETS,
  HOST_ARCHS,
  HOST_OSES,
  MAX_OPT_LEVEL,
  type ProgramConfig,
  type ProgramHostArch,
  type ProgramHostOs,
  type ProgramSanitize,
} from './program/config.js'
export { toolNotFoundHint, type ProgramOutput, type TargetImage, type ToolRunSummary } from './program/pipeline.js'
export { checkSymbolPrefix, DEFAULT_PROGRAM_NAME } from './program/symbols.js'
export { checkPtxasOptions, ptxasOptionTokens } from './ptxas-options.js'
export { runFatbinaryAsync, DEFAULT_FATBINARY_TIMEOUT_MS, type FatbinaryInput, type FatbinaryInputRoute, type FatbinaryRun, type FatbinaryStatus, type RunFatbinaryOptions } from './fatbinary.js'
export { buildFatbinaryArgv, FATBINARY_OUTPUT, type FatbinaryImage } from './fatbinary-argv.js'
export { Program, type CompileOptions } from './program/handle.js'
export { compileMany, type CompileManyOptions, type CompileResult } from './program/compile-many.js'
