#include "lib/unicode/unicode.h"

namespace ctxkit::internal::unicode {
namespace {

struct AsciiFoldExtra {
  char32_t code_point;
  char letter;
};

}  // namespace

#include "lib/unicode/unicode_tables.inc"

bool FoldsToAsciiLetter(char32_t cp, char lower) {
  if (cp < 0x80) return (cp | 0x20) == static_cast<char32_t>(lower);
  for (const AsciiFoldExtra& extra : kAsciiFoldExtras) {
    if (extra.code_point == cp) return extra.letter == lower;
  }
  return false;
}

}  // namespace ctxkit::internal::unicode
