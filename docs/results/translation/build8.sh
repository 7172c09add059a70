#!/bin/bash
# build8.sh GAME GAMETYPE (an F8 game, e.g. build8.sh ms_pacman MsPacman): as build.sh, labels per bank
set -e
g=$1; gt=$2
cd ${PROTO:-/tmp/proto}; mkdir -p $g; python mkcfg.py $g 16 200 >/dev/null; mv $g.cfg $g/
rm -rf $g/cpp; cp -r cpp8 $g/cpp
F="-std=c++17 -O3 -g1 -I$(python -c "import cule.benchmarks, os; print(os.path.dirname(cule.benchmarks.__file__))") -I${PROTO:-/tmp/proto}/$g/cpp -DCULE_SIMT_CART_TYPE=cule::CartType::kF8 -DCULE_SIMT_GAME=$gt -DPROTO_ONLY_CART=kF8 -DPROTO_ONLY_TYPE=CartF8 -DPROTO_SIZE=8192"
g++ $F -DPROTO_TRACE -DPROTO_BANKED driver.cpp -o $g/drv_trace
(cd $g && ./drv_trace $g.cfg 16 2000 && mv pcs.txt pcs16.txt)
sort -n $g/pcs16.txt | uniq > $g/pcs_all.txt
python gen8.py $(python -c "import cule;print(cule.load_rom('$g').path)") $g/pcs_all.txt $g/cpp/console
g++ $F driver.cpp -o $g/drv_base
g++ $F -DPROTO_TR -DPROTO_CHECKED driver.cpp -o $g/drv_trc
g++ $F -DPROTO_TR driver.cpp -o $g/drv_tr
echo built $g
