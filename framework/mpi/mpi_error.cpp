// MPI's error codes as text, and the checked call that throws them.
#include "framework/mpi/mpi_error.hpp"

#include <string>

namespace xf::mpi {

std::string call_site::str() const {
  std::string s;
  const auto add = [&s](const char* name, int value) {
    if (value < 0) return;
    if (!s.empty()) s += ", ";
    s += name;
    s += ' ';
    s += std::to_string(value);
  };
  add("rank", rank);
  add("peer", peer);
  add("tag", tag);
  return s;
}

namespace {
/// The names of the classes a send or receive meets; others print as their number.
const char* class_name(int error_class) {
  switch (error_class) {
    case MPI_ERR_BUFFER:
      return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE";
    case MPI_ERR_TAG:
      return "MPI_ERR_TAG";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK";
    case MPI_ERR_REQUEST:
      return "MPI_ERR_REQUEST";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN";
    case MPI_ERR_IN_STATUS:
      return "MPI_ERR_IN_STATUS";
    case MPI_ERR_PENDING:
      return "MPI_ERR_PENDING";
    default:
      return nullptr;
  }
}
}  // namespace

std::string describe_mpi_error(int code) {
  int error_class = code;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) error_class = code;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  const char* name = class_name(error_class);
  std::string s = name != nullptr ? name : "MPI error class " + std::to_string(error_class);
  if (length > 0) s += ": " + std::string(text, static_cast<std::size_t>(length));
  return s;
}

void mpi_check(int code, const char* call, const call_site& site, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  int error_class = code;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) error_class = MPI_ERR_UNKNOWN;
  std::string what = std::string(call) + " failed at " + file + ":" + std::to_string(line);
  const std::string who = site.str();
  if (!who.empty()) what += " (" + who + ")";
  throw mpi_error(error_class, what + ": " + describe_mpi_error(code));
}

}  // namespace xf::mpi
