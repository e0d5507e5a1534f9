#include "auth/credentials.h"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace blur::collector::auth {

namespace {

constexpr const char* kFileName = "credentials.toml";

Error system_error(const std::string& what, const std::string& path) {
  return unavailable(what + " " + path + ": " + std::strerror(errno));
}

std::optional<Role> role_from_name(std::string_view name) {
  for (Role role : {Role::kReader, Role::kAdmin, Role::kEnrollment}) {
    if (name == role_name(role)) return role;
  }
  return std::nullopt;
}

// TOML basic-string escaping for the names people give tokens.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(c));
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Fallible sync_directory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return system_error("cannot open directory", directory);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return system_error("cannot sync directory", directory);
  return done();
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

}  // namespace

const char* role_name(Role role) {
  switch (role) {
    case Role::kReader:
      return "reader";
    case Role::kAdmin:
      return "admin";
    case Role::kEnrollment:
      return "enrollment";
  }
  return "reader";
}

Outcome<std::string> new_bearer_token(Role role) {
  auto secret = random_secret();
  if (!secret) return secret.error();
  return std::string("blur-") + role_name(role) + "-" + to_hex(secret.value());
}

Outcome<Credentials> parse_credentials(std::string_view text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return invalid(source + ": " + std::string(e.description()));
  }
  Credentials out;
  std::set<uint32_t> key_ids;
  if (const toml::node* keys = root.get("device_token_key")) {
    const toml::array* array = keys->as_array();
    if (array == nullptr) return invalid(source + ": device_token_key must be [[tables]]");
    for (const toml::node& node : *array) {
      const toml::table* table = node.as_table();
      const auto id = table ? (*table)["id"].value_exact<int64_t>() : std::nullopt;
      const auto secret = table ? (*table)["secret"].value<std::string>() : std::nullopt;
      if (!id || *id < 1 || *id > UINT32_MAX || !secret) {
        return invalid(source + ": each [[device_token_key]] needs an id (1 to 2^32-1) and a "
                       "secret");
      }
      const auto bytes = digest_from_hex(*secret);
      if (!bytes) return invalid(source + ": a device_token_key secret is 64 lower-case hex digits");
      if (!key_ids.insert(static_cast<uint32_t>(*id)).second)
        return invalid(source + ": two device token keys have the id " + std::to_string(*id));
      DeviceTokenKey key;
      key.id = static_cast<uint32_t>(*id);
      key.secret = *bytes;
      out.device_token_keys.push_back(key);
    }
  }
  if (out.device_token_keys.empty())
    return invalid(source + ": no [[device_token_key]]; devices could not enroll");
  if (const toml::node* tokens = root.get("token")) {
    const toml::array* array = tokens->as_array();
    if (array == nullptr) return invalid(source + ": token must be [[tables]]");
    for (const toml::node& node : *array) {
      const toml::table* table = node.as_table();
      const auto role = table ? (*table)["role"].value<std::string>() : std::nullopt;
      const auto digest = table ? (*table)["sha256"].value<std::string>() : std::nullopt;
      if (!role || !digest)
        return invalid(source + ": each [[token]] needs a role and a sha256");
      StoredToken token;
      const auto parsed_role = role_from_name(*role);
      if (!parsed_role)
        return invalid(source + ": a token's role is admin, reader or enrollment");
      token.role = *parsed_role;
      const auto bytes = digest_from_hex(*digest);
      if (!bytes) return invalid(source + ": a token's sha256 is 64 lower-case hex digits");
      token.sha256 = *bytes;
      token.name = (*table)["name"].value_or(std::string());
      if (const toml::node* revoked = table->get("revoked_at")) {
        const auto at = revoked->value_exact<int64_t>();
        if (!at || *at < 1) return invalid(source + ": a token's revoked_at is Unix seconds (> 0)");
        token.revoked_at = *at;
      }
      out.tokens.push_back(std::move(token));
    }
  }
  if (const toml::node* devices = root.get("revoked_device")) {
    const toml::array* array = devices->as_array();
    if (array == nullptr) return invalid(source + ": revoked_device must be [[tables]]");
    std::set<uint64_t> nonces;
    for (const toml::node& node : *array) {
      const toml::table* table = node.as_table();
      const auto nonce = table ? (*table)["nonce"].value<std::string>() : std::nullopt;
      const toml::node* revoked = table ? table->get("revoked_at") : nullptr;
      const auto at = revoked ? revoked->value_exact<int64_t>() : std::optional<int64_t>(0);
      RevokedDevice device;
      if (!nonce || nonce->size() != 16 || !read_hex(*nonce, &device.device_nonce) || !at ||
          *at < 0) {
        return invalid(source + ": each [[revoked_device]] needs a nonce (16 lower-case hex " +
                       "digits) and may have a revoked_at (Unix seconds)");
      }
      if (!nonces.insert(device.device_nonce).second)
        return invalid(source + ": two [[revoked_device]] entries for the nonce " + *nonce);
      device.revoked_at = *at;
      out.revoked_devices.push_back(device);
    }
  }
  if (const toml::node* settings = root.get("device_tokens")) {
    const toml::table* table = settings->as_table();
    const auto days = table ? (*table)["lifetime_days"].value_exact<int64_t>() : std::nullopt;
    if (!days || *days < 1 || *days > 3650)
      return invalid(source + ": [device_tokens] lifetime_days is 1 to 3650");
    out.device_token_lifetime_days = static_cast<uint32_t>(*days);
  }
  for (const auto& [key, value] : root) {
    (void)value;
    if (key != "device_token_key" && key != "token" && key != "revoked_device" &&
        key != "device_tokens")
      return invalid(source + ": unknown key '" + std::string(key.str()) + "'");
  }
  return out;
}

std::string credentials_text(const Credentials& credentials) {
  std::ostringstream out;
  out << "# blur-collector credentials: readable by its owner only.\n"
         "# Device-token keys sign device tokens: the newest id signs, every one listed\n"
         "# verifies (rotate by adding one; drop an old one once its tokens expired).\n";
  for (const DeviceTokenKey& key : credentials.device_token_keys) {
    out << "\n[[device_token_key]]\nid = " << key.id << "\nsecret = \""
        << to_hex(key.secret.data(), key.secret.size()) << "\"\n";
  }
  out << "\n# Bearer tokens, as SHA-256 digests (the tokens themselves are not kept).\n";
  for (const StoredToken& token : credentials.tokens) {
    out << "\n[[token]]\nname = " << quoted(token.name) << "\nrole = \"" << role_name(token.role)
        << "\"\nsha256 = \"" << to_hex(token.sha256) << "\"\n";
    if (token.revoked_at != 0) out << "revoked_at = " << token.revoked_at << "\n";
  }
  if (!credentials.revoked_devices.empty()) {
    out << "\n# Revoked devices: refused (device tokens, certificates, enrollment) until an\n"
           "# admin restores them.\n";
  }
  for (const RevokedDevice& device : credentials.revoked_devices) {
    uint8_t nonce[8];
    for (int i = 0; i < 8; ++i)
      nonce[i] = static_cast<uint8_t>(device.device_nonce >> (56 - 8 * i));
    out << "\n[[revoked_device]]\nnonce = \"" << to_hex(nonce, sizeof nonce)
        << "\"\nrevoked_at = " << device.revoked_at << "\n";
  }
  out << "\n[device_tokens]\nlifetime_days = " << credentials.device_token_lifetime_days << "\n";
  return out.str();
}

namespace {

// The file's bytes, refusing a file that group or others may access.
Outcome<std::string> read_private_file(const std::string& path, const char* what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return system_error("cannot read", path);
  if ((info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return invalid("refusing " + path + ": mode " + mode + " lets others read or change " +
                   what + "; chmod 600 it");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return system_error("cannot read", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Outcome<Credentials> load_credentials(const std::string& path) {
  auto text = read_private_file(path, "the collector's keys");
  if (!text) return text.error();
  return parse_credentials(text.value(), path);
}

Outcome<std::string> read_token_file(const std::string& path) {
  auto text = read_private_file(path, "the token");
  if (!text) return text.error();
  std::string token = std::move(text).value();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
    token.pop_back();
  const bool printable = std::all_of(token.begin(), token.end(),
                                     [](char c) { return c > ' ' && c < 127; });
  if (token.size() < 16 || token.size() > 512 || !printable) {
    return invalid(path + " must hold one token: 16 to 512 printable characters, no spaces");
  }
  return token;
}

Fallible write_private_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return system_error("cannot create", path);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return system_error("cannot write", path);
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return system_error("cannot sync", path);
  return done();
}

Fallible save_credentials(const std::string& path, const Credentials& credentials) {
  const std::string temporary = path + ".new";
  ::unlink(temporary.c_str());  // a leftover of a crash between write and rename
  if (auto written = write_private_file(temporary, credentials_text(credentials)); !written)
    return written;
  if (::rename(temporary.c_str(), path.c_str()) != 0) return system_error("cannot replace", path);
  return sync_directory(directory_of(path));
}

std::string token_id(const Digest& sha256) { return to_hex(sha256.data(), 8); }

Fallible make_directory_private(const std::string& directory) {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) return system_error("cannot read", directory);
  if (!S_ISDIR(info.st_mode)) return invalid(directory + " is not a directory");
  const unsigned mode = info.st_mode & 07777;
  if ((mode & 077) == 0) return done();
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode);
  if ((mode & 022) != 0) {
    return invalid("refusing " + directory + ": mode " + text +
                   " lets others replace the collector's credentials; check its files, then "
                   "chmod 700 it");
  }
  // Readable or searchable only: nothing in it could have been changed, and
  // its files are 0600 (checked when read), so tightening loses nothing.
  if (::chmod(directory.c_str(), 0700) != 0) {
    return system_error(std::string("cannot make private (mode ") + text + ", chmod 700)",
                        directory);
  }
  return done();
}

std::string credentials_path(const std::string& directory) {
  return directory + "/" + kFileName;
}

Outcome<Credentials> open_credentials(const std::string& directory, FirstStart* first_start) {
  const std::string path = credentials_path(directory);
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST)
    return system_error("cannot create", directory);
  if (auto private_directory = make_directory_private(directory); !private_directory)
    return private_directory.error();
  if (::access(path.c_str(), F_OK) == 0) return load_credentials(path);
  Credentials made;
  auto key = random_secret();
  if (!key) return key.error();
  made.device_token_keys.push_back(DeviceTokenKey{1, key.value()});
  struct Initial {
    Role role;
    const char* file;
  };
  std::vector<std::pair<std::string, std::string>> files;  // path, token
  for (const Initial initial : {Initial{Role::kAdmin, "admin-token"},
                                Initial{Role::kReader, "reader-token"},
                                Initial{Role::kEnrollment, "enrollment-secret"}}) {
    auto token = new_bearer_token(initial.role);
    if (!token) return token.error();
    made.tokens.push_back(
        {std::string(role_name(initial.role)) + " (first start)", initial.role,
         sha256(token.value())});
    files.emplace_back(directory + "/" + initial.file, token.value() + "\n");
  }
  // The token files first: after a crash before the credentials file they
  // match no credentials, and the next start replaces them.
  for (const auto& [file, token] : files) {
    ::unlink(file.c_str());
    if (auto written = write_private_file(file, token); !written) return written.error();
    if (first_start != nullptr) first_start->token_files.push_back(file);
  }
  if (auto saved = save_credentials(path, made); !saved) return saved.error();
  return made;
}

}  // namespace blur::collector::auth
