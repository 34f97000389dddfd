// ELF64 constants used by the packager and the cubin reader (System V gABI, plus the CUDA values
// measured on ptxas 13.0 output). Only what this package reads or writes.

export const ELF_MAGIC = Object.freeze([0x7f, 0x45, 0x4c, 0x46]) // "\x7fELF"
export const ELFCLASS64 = 2
export const ELFDATA2LSB = 1
export const EV_CURRENT = 1

// e_ident indices
export const EI_CLASS = 4
export const EI_DATA = 5
export const EI_VERSION = 6
export const EI_OSABI = 7
export const EI_ABIVERSION = 8

export const ET_REL = 1
export const ET_EXEC = 2

export const EM_X86_64 = 62
export const EM_AARCH64 = 183
export const EM_CUDA = 190

export const ELF64_EHDR_SIZE = 64
export const ELF64_SHDR_SIZE = 64
export const ELF64_SYM_SIZE = 24

export const SHN_UNDEF = 0
export const SHN_LORESERVE = 0xff00
/** e_shstrndx escape: the real index is in sh_link of section 0. */
export const SHN_XINDEX = 0xffff

export const SHT_NULL = 0
export const SHT_PROGBITS = 1
export const SHT_SYMTAB = 2
export const SHT_STRTAB = 3
export const SHT_NOBITS = 8
/** SHT_LOPROC + 0: the type ptxas gives .nv.info and .nv.info.<kernel>. */
export const SHT_CUDA_INFO = 0x7000_0000
/** SHT_LOPROC + 0x86: the type ptxas 13.0 gives .nv.compat (records in the .nv.info format). */
export const SHT_CUDA_COMPAT = 0x7000_0086
/** SHT_NOTE: a note section (.note.gnu.property in host objects; .note.nv.tkinfo in cubins). */
export const SHT_NOTE = 7
/** The note type of .note.nv.tkinfo's record (name "NVIDIA Corp"). */
export const NT_CUDA_TKINFO = 2000

export const SHF_ALLOC = 0x2

export const STB_LOCAL = 0
export const STB_GLOBAL = 1
export const STT_NOTYPE = 0
export const STT_OBJECT = 1
export const STT_FUNC = 2
export const STV_DEFAULT = 0
/** st_other bit ptxas sets on kernels (nvdisasm prints it as STO_CUDA_ENTRY). */
export const STO_CUDA_ENTRY = 0x10

// .nv.info records: u8 format, u8 attribute, u16 (the value, or the size of the payload that follows).
export const EIFMT_NVAL = 0x01
export const EIFMT_BVAL = 0x02
export const EIFMT_HVAL = 0x03
export const EIFMT_SVAL = 0x04

/**
 * .nv.compat attribute 0x09: 1 in a cubin for an architecture-specific target (sm_90a, sm_100a,
 * ...), 0 otherwise (measured on ptxas 13.0; a family target, sm_100f, is 0 like sm_100).
 */
export const EICOMPAT_ARCH_SPECIFIC = 0x09
export const EIATTR_MAX_THREADS = 0x05
export const EIATTR_REQNTID = 0x10
export const EIATTR_MAXREG_COUNT = 0x1b
export const EIATTR_REGCOUNT = 0x2f
export const EIATTR_CTA_PER_CLUSTER = 0x3d
export const EIATTR_EXPLICIT_CLUSTER = 0x3e
export const EIATTR_MAX_CLUSTER_RANK = 0x3f
