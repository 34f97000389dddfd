{
  "targets": [
    {
      "target_name": "tileharness",
      "sources": [
        "native/binding.cc",
        "native/spec.cc",
        "native/result.cc",
        "native/sync.cc",
        "native/async.cc",
        "native/anonymous-file.cc",
        "native/file-attrs.cc",
        "native/exit-clock.cc",
        "native/js-call.cc",
        "native/environ.cc",
        "native/path-open.cc",
        "native/interrupt.cc",
        "native/launcher.cc",
        "native/alarm.cc",
        "native/waiter.cc",
        "native/launch-thread.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "_GNU_SOURCE"
      ],
      "cflags!": [
        "-fno-exceptions"
      ],
      "cflags_cc!": [
        "-fno-exceptions",
        "-fno-rtti"
      ],
      "cflags_cc": [
        "-std=c++17",
        "-fexceptions",
        "-Wall",
        "-Wextra",
        "-Wno-missing-field-initializers"
      ],
      "conditions": [
        [
          "sanitize==1",
          {
            "cflags_cc": [
              "-fsanitize=address,undefined",
              "-fno-omit-frame-pointer",
              "-g"
            ],
            "ldflags": [
              "-fsanitize=address,undefined"
            ]
          }
        ]
      ]
    },
    {
      "target_name": "tileharness-exec",
      "type": "none",
      "actions": [
        {
          "action_name": "build_helper",
          "message": "building the measuring helper (scripts/build-helper.sh)",
          "inputs": [
            "scripts/build-helper.sh",
            "native/exec-helper.c",
            "native/exec-search.h",
            "native/helper-report.h",
            "native/rusage-fields.h"
          ],
          "outputs": [
            "<(PRODUCT_DIR)/tileharness-exec"
          ],
          "action": [
            "sh",
            "scripts/build-helper.sh",
            "<(PRODUCT_DIR)/tileharness-exec",
            "native/exec-helper.c"
          ]
        }
      ]
    }
  ],
  "variables": {
    "sanitize%": 0
  }
}
