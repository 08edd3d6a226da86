// SPDX-License-Identifier: Apache-2.0
// Assertions of the CPU validation tests: a call refused with a given status and message, or one
// that passed every check the host makes before it needs a device.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "hgemm/hgemm.h"

namespace hgemm::test {

/// Refused with `want`, and the message contains `text`.
inline testing::AssertionResult refused(Status got, Status want, const std::string& text) {
  if (got != want)
    return testing::AssertionFailure() << "status " << status_string(got) << ", expected " << status_string(want)
                                       << " (message: " << last_error_message() << ")";
  if (last_error_message().find(text) == std::string::npos)
    return testing::AssertionFailure() << "message \"" << last_error_message() << "\" does not mention \"" << text
                                       << "\"";
  return testing::AssertionSuccess();
}

/// Passed every check that needs no device: then no device (CPU machines) or the fake pointers
/// (and, where `other_gpus`, a GPU the call does not run on).
inline testing::AssertionResult accepted(Status got, bool other_gpus = false) {
  if (got == Status::NoDevice || got == Status::InvalidPointer || (other_gpus && got == Status::UnsupportedArch))
    return testing::AssertionSuccess();
  return testing::AssertionFailure() << "refused before the device checks: " << status_string(got) << ": "
                                     << last_error_message();
}

}  // namespace hgemm::test
