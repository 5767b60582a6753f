#!/bin/sh
# A pretend machine for tests/setup/test_deps.c: DIR/bin holds stand-ins for the commands
# scripts/deps.sh looks for and calls, and is the whole PATH it runs with, so that what is
# "installed", who the user is and whether apt-get and sudo exist are the test's to choose.
#   tests/setup/mock_machine.sh DIR MISSING UID APT SUDO ALT
# MISSING: the names of scripts/deps.sh's table that are absent (space-separated); UID: what `id -u`
# prints; APT: 1 an apt-get that logs its arguments to DIR/apt.log and installs everything, 2 one
# that logs and fails, 0 none; SUDO: 1 a sudo that runs its command without a password (logged),
# 0 none; ALT: the value of the hdf5.pc alternative (DIR/alt; '' when update-alternatives does not
# manage it), which installing libsundials-dev switches to DIR/hdf5-mpi.pc, as on Debian.
set -eu
dir=$1 missing=$2 uid=$3 apt=$4 sudo=$5 alt=$6
bin=$dir/bin
mkdir -p "$bin"
printf ' %s \n' "$missing" >"$dir/missing"
stand_in() { printf '#!/bin/sh\n%s\n' "$2" >"$bin/$1" && chmod +x "$bin/$1"; }
# A stand-in that fails while NAME is missing (DIR/missing is read with builtins: PATH has nothing else).
unless_missing() { stand_in "$1" "read -r m <'$dir/missing'; m=\" \$m \"; case \"\$m\" in *' $2 '*) exit 1 ;; esac; exit 0"; }

stand_in id "echo $uid"
unless_missing cc sundials
unless_missing gcc sundials
unless_missing clang fuzz
unless_missing cmake cmake
unless_missing make make
unless_missing gnuplot gnuplot
unless_missing h5dump h5dump
unless_missing gcovr gcovr
unless_missing mpicc mpi
unless_missing mpirun mpi
# pkg-config --exists MODULE: the module missing, or pkg-config itself.
stand_in pkg-config "read -r m <'$dir/missing'; m=\" \$m \"; case \"\$m\" in *' pkg-config '* | *\" \$2 \"*) exit 1 ;; esac; exit 0"
# A command found by name is found by `command -v` even when it fails: the missing ones are removed
# (an install puts them back).
for c in cmake make gnuplot h5dump gcovr pkg-config; do
  case " $missing " in *" $c "*) mv "$bin/$c" "$bin/.$c" ;; esac
done
case " $missing " in *" mpi "*) mv "$bin/mpicc" "$bin/.mpicc" && mv "$bin/mpirun" "$bin/.mpirun" ;; esac

if [ -n "$alt" ]; then
  printf '%s\n' "$alt" >"$dir/alt"
  stand_in update-alternatives "read -r v <'$dir/alt'
case \$1 in
--query) echo 'Name: hdf5.pc'; echo \"Value: \$v\" ;;
--set) echo \"\$3\" >'$dir/alt'; echo \"update-alternatives \$*\" >>'$dir/apt.log' ;;
esac"
fi
if [ "$apt" != 0 ]; then
  stand_in apt-get "echo \"apt-get \$*\" >>'$dir/apt.log'
[ $apt = 1 ] || exit 100
case \" \$* \" in *' install '*) ;; *) exit 0 ;; esac
echo ' ' >'$dir/missing'
for c in '$bin'/.*; do [ -f \"\$c\" ] && /bin/mv \"\$c\" '$bin'/\"\${c##*/.}\"; done
case \" \$* \" in *' libsundials-dev '*) [ -e '$dir/alt' ] && echo '$dir/hdf5-mpi.pc' >'$dir/alt' ;; esac
exit 0"
fi
if [ "$sudo" = 1 ]; then
  stand_in sudo "echo \"sudo \$*\" >>'$dir/apt.log'; [ \"\$1\" = -n ] && shift; \"\$@\""
fi
