// The thread-local message behind last_error_message(), shared by the API's files.
#pragma once

#include <cstdint>
#include <string>

#include "hgemm/hgemm.h"

namespace hgemm::detail {

/// Sets the message and returns s.
Status fail(Status s, std::string message);
/// Prefixes the current message (e.g. with the batch entry it concerns) and returns s.
Status fail_in(Status s, const std::string& prefix);
void clear_error();

/// a·b in decimal, computed in 128 bits: a message may name a product of sizes that 64 bits
/// cannot hold.
inline std::string product_string(std::int64_t a, std::int64_t b) {
  __int128 x = static_cast<__int128>(a) * b;
  if (x == 0) return "0";
  const bool negative = x < 0;
  std::string digits;
  for (; x != 0; x /= 10) digits.insert(digits.begin(), static_cast<char>('0' + (negative ? -(x % 10) : x % 10)));
  return negative ? "-" + digits : digits;
}

}  // namespace hgemm::detail
