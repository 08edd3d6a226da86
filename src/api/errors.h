// SPDX-License-Identifier: Apache-2.0
// The thread-local message behind last_error_message(), shared by the API's files.
#pragma once

#include <string>

#include "hgemm/hgemm.h"

namespace hgemm::detail {

/// Sets the message and returns s.
Status fail(Status s, std::string message);
/// Prefixes the current message (e.g. with the batch entry it concerns) and returns s.
Status fail_in(Status s, const std::string& prefix);
void clear_error();

}  // namespace hgemm::detail
