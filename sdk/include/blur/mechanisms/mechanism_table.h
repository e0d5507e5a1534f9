/* The one list of Blur's mechanisms. Everything that enumerates them comes
 * from this table: blur::MechanismId, its names, payloads and domain limits
 * (mechanism.h), the C API's blur_mechanism (blur.h), the names that CMake's
 * blur_client_library() accepts (sdk/CMakeLists.txt reads this file), and the
 * collector's registry of mechanism specs. A compile-time check
 * (sdk/src/report_encoding.cpp) ties it to blur.proto's Mechanism enum.
 * Plain preprocessor, so C and CMake can read it too: keep one line per
 * mechanism, in id order.
 *
 * X(id, CppName, name, C_NAME, PROTO_NAME, Payload, max_domain)
 *   id          the wire value (blur.proto's Mechanism, never reused)
 *   CppName     blur::MechanismId::k<CppName>
 *   name        the short name of CLIs, configuration files and CMake
 *   C_NAME      BLUR_MECHANISM_<C_NAME> in the C API
 *   PROTO_NAME  blur.proto's MECHANISM_<PROTO_NAME>
 *   Payload     the Report field it fills: blur::PayloadKind::k<Payload>
 *   max_domain  the largest domain size the device accepts (smallest: 2;
 *               the unary encodings' follows BLUR_MAX_BIT_VECTOR_BYTES;
 *               for word discovery (pem, sfp) the longest word)
 *
 * A new mechanism: a line here, its device code (a header with create(),
 * randomize() and its MechanismBuilder<id>, mechanism_builder.h) and that
 * header's line in any_mechanism.h, its collector spec
 * (collector/src/mechanisms/), its tests. The Client, the simulator and the
 * flash-cost probe dispatch through the builders, so none of them names it. */
#ifndef BLUR_MECHANISM_TABLE_H
#define BLUR_MECHANISM_TABLE_H

/* clang-format off */
#define BLUR_MECHANISM_TABLE(X) \
  X(1, BinaryRandomizedResponse, rr, RR, BINARY_RR, Bit, 2u) \
  X(2, GeneralizedRandomizedResponse, grr, GRR, GRR, Index, 65536u) \
  X(3, SymmetricUnaryEncoding, sue, SUE, SUE, Bits, BLUR_MAX_BIT_VECTOR_BYTES * 8u) \
  X(4, OptimizedUnaryEncoding, oue, OUE, OUE, Bits, BLUR_MAX_BIT_VECTOR_BYTES * 8u) \
  X(5, DiscreteLaplace, laplace, LAPLACE, DISCRETE_LAPLACE, Number, 16777216u) \
  X(6, OneBitMean, onebit, ONEBIT, ONE_BIT_MEAN, Bit, 16777216u) \
  X(7, HadamardResponse, hr, HR, HADAMARD_RESPONSE, Index, 65535u) \
  X(8, OptimizedLocalHashing, olh, OLH, OLH, LocalHash, 4096u) \
  X(9, BinaryLocalHashing, blh, BLH, BLH, LocalHash, 4096u) \
  X(10, Rappor, rappor, RAPPOR, RAPPOR, Bloom, 1048576u) \
  X(11, PrefixExtension, pem, PEM, PEM, LocalHash, 16u) \
  X(12, SequenceFragmentPuzzle, sfp, SFP, SFP, LocalHash, 16u) \
  X(13, Loloha, loloha, LOLOHA, LOLOHA, LocalHash, 4096u)
/* clang-format on */

/* After the table: config.h's defaults and checks expand it, and it gives
 * the table's BLUR_MAX_BIT_VECTOR_BYTES (either header may come first). */
#include "blur/config.h"

#endif /* BLUR_MECHANISM_TABLE_H */
