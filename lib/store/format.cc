#include "lib/store/format.h"

namespace ctxkit::internal {

const FormatSpec& DefaultFormat() {
  // Version 1 is the first format, so there is nothing to migrate from yet.
  // A format change adds {from, apply} here and bumps Store::kFormatVersion.
  static const FormatSpec* spec = new FormatSpec{Store::kFormatVersion, {}};
  return *spec;
}

}  // namespace ctxkit::internal
