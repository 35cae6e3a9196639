# Build dependencies: Debian's packages (fmt, nlohmann-json, doctest, xxhash), the CUDA
# toolkit's headers (cuda.h, nvrtc.h) and the HIP headers (hip/hiprtc.h). No vendor
# library is linked: the backends open them with dlopen at run time.
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json REQUIRED)

find_path(CC1D_XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
add_library(cc1d_xxhash INTERFACE)
target_include_directories(cc1d_xxhash SYSTEM INTERFACE ${CC1D_XXHASH_INCLUDE_DIR})
target_compile_definitions(cc1d_xxhash INTERFACE XXH_INLINE_ALL)

if(CC1D_WITH_CUDA)
  find_path(CC1D_CUDA_INCLUDE_DIR NAMES cuda.h nvrtc.h
    HINTS ENV CUDA_PATH ENV CUDA_HOME /usr/local/cuda PATH_SUFFIXES include)
  if(NOT CC1D_CUDA_INCLUDE_DIR)
    message(STATUS "cc1d: CUDA headers not found; the NVIDIA backend is left out")
  endif()
endif()
if(CC1D_WITH_HIP)
  find_path(CC1D_HIP_INCLUDE_DIR NAMES hip/hiprtc.h HINTS ENV ROCM_PATH /opt/rocm PATH_SUFFIXES include)
  if(NOT CC1D_HIP_INCLUDE_DIR)
    message(STATUS "cc1d: HIP headers not found; the AMD backend is left out")
  endif()
endif()
