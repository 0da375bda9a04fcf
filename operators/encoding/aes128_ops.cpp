// The AES operators' parameters as written: the mode, 16-byte values in hexadecimal, a key file.
#include "operators/encoding/aes128_ops.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace xf::aes_params {

const char* parse_mode(const std::string& text, mode& out) {
  if (text == "ecb")
    out = mode::ecb;
  else if (text == "ctr")
    out = mode::ctr;
  else
    return "must be ecb or ctr";
  return "";
}

const char* parse_block(const std::string& text, block_text& out) {
  out = block_text{};
  if (text.empty()) return "";
  if (text.size() != 32) return "takes 32 hexadecimal digits (16 bytes)";
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < 16; ++i) {
    const int high = digit(text[2 * i]), low = digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return "takes 32 hexadecimal digits (16 bytes)";
    out.bytes[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  out.given = true;
  return "";
}

std::string parse_key_file(const std::string& path, block_text& out) {
  out = block_text{};
  if (path.empty()) return "";
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot open '" + path + "': " + std::strerror(errno);
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (content.size() == 16) {
    for (std::size_t i = 0; i < 16; ++i) out.bytes[i] = static_cast<std::uint8_t>(content[i]);
    out.given = true;
    return "";
  }
  std::size_t begin = 0, end = content.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(content[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(content[end - 1]))) --end;
  if (*parse_block(content.substr(begin, end - begin), out) != '\0' || !out.given)
    return "the key file holds neither 16 bytes nor 32 hexadecimal digits";
  return "";
}

}  // namespace xf::aes_params
